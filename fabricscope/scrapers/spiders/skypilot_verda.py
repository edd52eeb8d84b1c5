"""Verda (ex-DataCrunch) GPU instances from SkyPilot's catalog, on demand and spot.

Some rows have only a ``SpotPrice`` (spot-only types): they give a spot offer alone.
``GpuInfo`` is JSON here, not a Python repr; ``SizeInMiB`` is per GPU.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotVerdaSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_verda"
    start_urls = [catalog_url("verda")]
    refresh_cron = "27 */6 * * *"
    item_attributes = {
        "provider": "datacrunch",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
