"""Seeweb's GPU cloud servers from SkyPilot's catalog (on demand; GPUs in it-fr2 only).

Quirks: GPU names are left as published, ``L40s`` with a lower-case s included (mapping
names is the normalise pipeline's job); ``AcceleratorCount`` is the GPU count even where
the type's name suggests another (``ECS1GPU8`` is 4 x H100, as its ``GpuInfo`` Count and
its 4 x 81920 MiB total agree); CPU-only rows (48 of 69) are skipped and counted.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotSeewebSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_seeweb"
    start_urls = [catalog_url("seeweb")]
    refresh_cron = "39 */6 * * *"
    item_attributes = {
        "provider": "seeweb",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
