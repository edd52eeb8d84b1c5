"""Lium's GPU machines from SkyPilot's catalog (on demand; a region per country).

Quirks: ``GpuInfo`` puts ``TotalGpuMemoryInMiB`` inside the GPU item rather than beside
``Gpus``; it is not read: ``SizeInMiB`` holds one GPU's memory in MiB, as elsewhere. Some
of those sizes are not the GPU's datasheet size (L40S and L40 46080 MiB = 45 GB, not 48;
B200 183296 MiB = 179 GB): they are kept as stated, converted like every catalog's MiB.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotLiumSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_lium"
    start_urls = [catalog_url("lium")]
    refresh_cron = "31 */6 * * *"
    item_attributes = {
        "provider": "lium",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
