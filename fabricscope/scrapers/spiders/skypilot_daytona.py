"""Daytona's GPU sandboxes from SkyPilot's catalog, on demand and spot (region "earth").

Every GPU row is an offer, the consumer cards (RTX 4090, RTX 5090) and AMD's MI355X
included: they are GPUs, priced like the others. CPU-only rows (regions us, eu) are
skipped and counted. ``SizeInMiB`` is per GPU, in MiB (B300 and MI355X: 294912 = 288 GB).
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotDaytonaSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_daytona"
    start_urls = [catalog_url("daytona")]
    refresh_cron = "55 */6 * * *"
    item_attributes = {
        "provider": "daytona",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
