"""JarvisLabs' GPU instances from SkyPilot's catalog (on demand; regions IN1, IN2).

Quirks: the columns end ``...,Region,SpotPrice,Price`` (read by header name, so the
order does not matter); CPU-only rows (10 of 29) are skipped and counted.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotJarvislabsSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_jarvislabs"
    start_urls = [catalog_url("jarvislabs")]
    refresh_cron = "25 */6 * * *"
    item_attributes = {
        "provider": "jarvislabs",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
