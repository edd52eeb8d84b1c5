"""Spheron's GPU offers from SkyPilot's catalog, on demand and spot.

Spheron resells other clouds' machines (its ``Provider`` column: sesterce,
data-crunch, massed-compute, spheron-ai) at its own prices; the offers are Spheron's.
``AcceleratorName`` carries the form factor (``H100_PCIE``, ``A100_80G_SXM4``) and is
published as it stands. Rows with only a ``SpotPrice`` (``n3-A100x1-spot__CANADA-1``,
``SpheronInstanceType`` SPOT) are spot offers of that instance type, as listed.
``GpuInfo`` is JSON with ``TotalGpuMemoryInMiB`` inside the GPU item (not read);
``SizeInMiB`` is per GPU, in MiB.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotSpheronSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_spheron"
    start_urls = [catalog_url("spheron")]
    refresh_cron = "45 */6 * * *"
    item_attributes = {
        "provider": "spheron",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
