"""Nebius's GPU instance prices per GPU-hour: preemptible (spot) and on-demand."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider, node_text

_PRICE_COLUMNS = {"Preemptible, GPU-hour": "spot", "On-demand, GPU-hour": "on_demand"}
# "NVIDIA L40S with Intel CPU": the GPU, then the host it comes with
_GPU_AND_HOST = re.compile(r"^(?P<gpu>.+?) with \w+ CPU$")
_RANGE = re.compile(r"\d\s*-\s*\d")  # "16-192" vCPUs: no single value to publish


def _single(value: str) -> str | None:
    return None if _RANGE.search(value) else value


class NebiusSpider(LayoutSpider):
    name = "nebius"
    start_urls = ["https://nebius.com/prices"]
    refresh_cron = "51 */6 * * *"
    item_attributes = {
        "provider": "nebius",
        "currency": "USD",
        "price_basis": "per_gpu",  # "GPU-hour" columns
        "obtained_by": "scraped",
    }
    layouts = ("parse_highlight_tables",)

    def parse_highlight_tables(self, response: Response) -> Iterator[RawOffer]:
        """2026: div tables (.pc-highlight-table-block), a head row then a row per GPU."""
        for table in response.css(".pc-highlight-table-block__content"):
            headers = [
                node_text(c)
                for c in table.css(
                    ".pc-highlight-table-block__head .pc-highlight-table-block__cell"
                )
            ]
            if headers[:3] != ["Item", "vCPUs", "RAM, GB"] or not _PRICE_COLUMNS.keys() & set(
                headers
            ):
                continue  # CPU-only and other tables
            for row in table.css(".pc-highlight-table-block__body .pc-highlight-table-block__row"):
                values = [node_text(c) for c in row.css(".pc-highlight-table-block__cell")]
                if len(values) != len(headers):
                    continue
                cells = dict(zip(headers, values, strict=True))
                item = cells["Item"]
                named = _GPU_AND_HOST.match(item)
                for column, tier in _PRICE_COLUMNS.items():
                    if column not in cells:
                        continue
                    yield RawOffer(
                        instance_type=f"{item} (per GPU)",
                        gpu_name=named.group("gpu") if named else item,
                        gpu_count=1,
                        vcpus=_single(cells["vCPUs"]),  # per GPU, as the prices are
                        ram_gb=_single(cells["RAM, GB"]),
                        pricing_tier=tier,
                        price=cells[column],  # "from $1.55" for L40S: the smallest configuration
                        source_url=response.url,
                    )
