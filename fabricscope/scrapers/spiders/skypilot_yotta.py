"""Yotta's GPU instances from SkyPilot's catalog (on demand; RTX 5090 only).

Quirk: ``GpuInfo``'s ``Count`` is 1 on every row, also on the 2-, 4- and 8-GPU types.
``AcceleratorCount`` is trusted instead (it is the GPU count of every SkyPilot catalog):
the type names (``8x112v952g_...``) and ``TotalGpuMemoryInMiB`` (8 x 32607) agree with
it. ``SizeInMiB`` is per GPU, in MiB (32607: what the card reports, not 32768).
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotYottaSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_yotta"
    start_urls = [catalog_url("yotta")]
    refresh_cron = "49 */6 * * *"
    item_attributes = {
        "provider": "yotta",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
