"""Hyperbolic's GPU instances from SkyPilot's catalog (on demand; region "default")."""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotHyperbolicSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_hyperbolic"
    start_urls = [catalog_url("hyperbolic")]
    refresh_cron = "57 */6 * * *"
    item_attributes = {
        "provider": "hyperbolic",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
