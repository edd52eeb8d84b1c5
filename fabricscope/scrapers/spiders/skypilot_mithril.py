"""Mithril (ex-Foundry) GPU instances from SkyPilot's catalog.

SkyPilot's fetcher (sky/catalog/data_fetchers/fetch_mithril.py) writes one number,
Mithril's ``minimum_price_cents`` / 100, into both ``Price`` and ``SpotPrice``: the
1.0 / 8.0 values are that floor (1 USD per GPU-hour), not an on-demand or spot price.
A row whose two prices are equal is therefore yielded once with the price
"placeholder", which the clean pipeline drops as no_price: counted, never published.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotMithrilSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_mithril"
    start_urls = [catalog_url("mithril")]
    refresh_cron = "51 */6 * * *"
    item_attributes = {
        "provider": "mithril",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def prices(self, row: dict[str, str]) -> Iterator[tuple[str, str]]:
        if row["Price"].strip() and row["Price"].strip() == row["SpotPrice"].strip():
            yield "on_demand", "placeholder"
            return
        yield from super().prices(row)
