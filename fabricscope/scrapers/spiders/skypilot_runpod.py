"""RunPod pods from SkyPilot's catalog, on demand and spot (the recording is a sample).

The recorded file is the catalog's first page only (79 rows, all A100 80GB), so a
replayed run knows a sliver of RunPod; a live run reads the whole catalog.

Quirks of this catalog:

- one row per data centre (``AvailabilityZone``: US-TX-3, CA-MTL-1...) of a country
  ``Region`` (US, CA...), identical but for the zone (the US lists 14): they are
  collapsed into one offer per (instance type, region, tier) whose ``zones`` counts
  them. One data centre can sit in two regions (EU-SE-1 under both NO and SE): each
  region keeps its offer, as listed;
- ``GpuInfo.SizeInMiB`` holds GB (80 for an A100 80GB), not MiB;
- ``GpuInfo.Name`` is RunPod's own name for the GPU ("A100 PCIe") where
  ``AcceleratorName`` is SkyPilot's ("A100-80GB", RunPod's PCIe card in SkyPilot's
  naming; its SXM card is "A100-80GB-SXM"): RunPod's, which states the form factor,
  is the name published.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricscope.scrapers.spiders._skypilot import (
    SkyPilotCatalog,
    catalog_url,
    first_gpu,
    size_in_mib,
)
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotRunpodSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_runpod"
    start_urls = [catalog_url("runpod")]
    refresh_cron = "59 */6 * * *"
    zone_column = "AvailabilityZone"
    item_attributes = {
        "provider": "runpod",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def zone_rows(self, rows: list[dict[str, str]]) -> Iterator[dict[str, str]]:
        for row in rows:
            runpods_name = first_gpu(row["GpuInfo"]).get("Name") if row["GpuInfo"] else None
            yield {**row, "AcceleratorName": runpods_name} if runpods_name else row

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        return size_in_mib(row)  # already GB, whatever the key says
