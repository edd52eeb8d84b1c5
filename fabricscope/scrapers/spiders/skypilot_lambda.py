"""Lambda's GPU instances from SkyPilot's catalog (on demand; Lambda has no spot)."""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotLambdaSpider(SkyPilotCatalog, CsvCatalogSpider):
    """The catalog repeats each type in every region at one global price: one offer per
    region, as the catalog lists them. Quirk: ``TotalGpuMemoryInMiB`` holds the per-GPU
    size, so only ``SizeInMiB`` (per GPU, MiB) is read."""

    name = "skypilot_lambda"
    start_urls = [catalog_url("lambda")]
    refresh_cron = "11 */6 * * *"
    item_attributes = {
        "provider": "lambda",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
