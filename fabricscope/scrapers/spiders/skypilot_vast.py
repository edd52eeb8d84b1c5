"""Vast.ai marketplace offers from SkyPilot's catalog snapshot (on demand only).

Quirks of this catalog: ``SpotPrice`` is 0.00 on every row, meaning "not provided"
(no spot offer); ``GpuInfo.SizeInMiB`` is the memory of all the row's GPUs together
(2x H200: 287542 MiB), so it is divided by ``AcceleratorCount``; ``vCPUs`` and
``MemoryGiB`` are fixed 32/64 placeholders of SkyPilot's, not the machine's, so
they stay unknown.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders._skypilot import (
    MIB_PER_GIB,
    SkyPilotCatalog,
    catalog_url,
    size_in_mib,
)
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotVastSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_vast"
    start_urls = [catalog_url("vast")]
    refresh_cron = "35 */6 * * *"
    item_attributes = {
        "provider": "vast_ai",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def prices(self, row: dict[str, str]) -> Iterator[tuple[str, str]]:
        for tier, price in super().prices(row):
            if tier == "spot" and parse_number(price) == 0:
                continue  # 0.00 = not provided
            yield tier, price

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        total = size_in_mib(row)
        count = parse_number(row["AcceleratorCount"])
        return round(total / count / MIB_PER_GIB, 2) if total and count else None

    def host(self, row: dict[str, str]) -> tuple[str | None, str | None]:
        return None, None
