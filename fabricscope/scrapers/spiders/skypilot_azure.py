"""Azure N-series VMs from SkyPilot's catalog (schema v6, the newest for Azure).

v6 has no ``AvailabilityZone`` (one row per VM size and region, so one offer each),
``GpuInfo`` is a bare GPU name (no memory: ``gpu_memory_gb`` stays unknown) and a
``Generation`` column is not read. Quirks, each counted:

- ``Standard_ND96isr_H100_v5`` reads ``AcceleratorCount`` 12; Azure sells 8 H100 per
  VM, so 8 is used (``fabricscope/corrected/gpu_count/<size>``).
- H100 rows repeat ``Price`` in ``SpotPrice``: a spot price equal to on demand is a
  copy, not a spot price, so there is no spot offer
  (``fabricscope/skipped/spot_equals_price``).
- NVv4 sizes sell part of one Radeon MI25 although the catalog says 1 GPU: the
  partial sizes are ``fabricscope/skipped/fractional_gpu``.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

# "The ND H100 v5 series starts with a single VM and eight NVIDIA H100 Tensor Core
# GPUs." (MicrosoftDocs/azure-docs, articles/virtual-machines/sizes/gpu-accelerated/
# includes/nd-h100-v5-series-summary.md, shown on
# https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series;
# its specs table: "Accelerators | 8 GPUs")
GPU_COUNT_CORRECTIONS = {"Standard_ND96isr_H100_v5": 8}

# "With NVv4-series Azure is introducing virtual machines with partial GPUs ... starting
# at 1/8th of a GPU": NV4as_v4 1/8, NV8as_v4 1/4, NV16as_v4 1/2, NV32as_v4 1 GPU
# (MicrosoftDocs/azure-docs articles/virtual-machines/nvv4-series.md,
# https://learn.microsoft.com/azure/virtual-machines/nvv4-series)
PARTIAL_GPU_SIZES = frozenset({"Standard_NV4as_v4", "Standard_NV8as_v4", "Standard_NV16as_v4"})


class SkypilotAzureSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_azure"
    start_urls = [catalog_url("azure", schema="v6")]
    refresh_cron = "21 */6 * * *"
    item_attributes = {
        "provider": "azure",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def skip_reason(self, row: dict[str, str]) -> str | None:
        if row["InstanceType"] in PARTIAL_GPU_SIZES:
            return "fractional_gpu"
        return super().skip_reason(row)

    def prices(self, row: dict[str, str]) -> Iterator[tuple[str, str]]:
        for tier, price in super().prices(row):
            if tier == "spot" and parse_number(price) == parse_number(row["Price"]):
                self.crawler.stats.inc_value("fabricscope/skipped/spot_equals_price")
                continue
            yield tier, price

    def gpu_count(self, row: dict[str, str]) -> str:
        size = row["InstanceType"]
        published = row["AcceleratorCount"]
        if size in GPU_COUNT_CORRECTIONS and parse_number(published) != GPU_COUNT_CORRECTIONS[size]:
            self.crawler.stats.inc_value(f"fabricscope/corrected/gpu_count/{size}")
            return str(GPU_COUNT_CORRECTIONS[size])
        return published
