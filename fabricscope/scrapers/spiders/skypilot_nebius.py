"""Nebius GPU presets from SkyPilot's catalog: on-demand and preemptible (spot) prices."""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotNebiusSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_nebius"
    start_urls = [catalog_url("nebius")]
    refresh_cron = "19 */6 * * *"
    item_attributes = {
        "provider": "nebius",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
