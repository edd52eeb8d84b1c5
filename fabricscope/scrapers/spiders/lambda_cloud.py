"""Lambda's on-demand GPU instances from its pricing page (two layouts seen so far)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider

_COUNT_AND_NAME = re.compile(r"^(On-demand|Reserved)\s+(\d+)x\s+(.+)$", re.IGNORECASE)


class LambdaCloudSpider(LayoutSpider):
    name = "lambda_cloud"
    start_urls = ["https://lambda.ai/pricing"]
    refresh_cron = "23 */6 * * *"
    item_attributes = {
        "provider": "lambda",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_gpu",  # "PRICE/GPU/HR"
        "obtained_by": "scraped",
    }
    layouts = ("parse_tabbed_table", "parse_named_rows")

    def _offer(self, response: Response, count: int, gpu: str, cells: list[str]) -> RawOffer:
        memory, vcpus, ram, _storage, price = cells[-5:]
        return RawOffer(
            instance_type=f"{count}x {gpu} {memory}",
            gpu_name=gpu,
            gpu_count=count,
            gpu_memory_gb=memory,
            vcpus=vcpus,
            ram_gb=ram,  # GiB as published; GiB vs GB differs by 7%, kept as the page says
            price=price,
            source_url=response.url,
        )

    def parse_tabbed_table(self, response: Response) -> Iterator[RawOffer]:
        """2026 (lambda.ai/pricing): one table per "8x/4x/2x/1x" tab; the count is the tab."""
        for panel in response.css("[role=tabpanel]"):
            label = response.css(f"[aria-controls='{panel.attrib.get('id')}']::text").get("")
            count = re.fullmatch(r"\s*(\d+)x\s*", label)
            if count is None:
                continue
            for row in panel.css("tr"):
                cells = [
                    " ".join(t.split())
                    for t in row.css("th *::text, th::text, td *::text, td::text").getall()
                ]
                cells = [c for c in cells if c]
                if len(cells) >= 6:
                    yield self._offer(response, int(count.group(1)), cells[0], cells)

    def parse_named_rows(self, response: Response) -> Iterator[RawOffer]:
        """2024 (lambdalabs.com/service/gpu-cloud): "On-demand 8x NVIDIA H100 SXM" rows."""
        for row in response.css("tr"):
            cells = [
                " ".join(t.split())
                for t in row.css("th *::text, th::text, td *::text, td::text").getall()
            ]
            cells = [c for c in cells if c]
            named = _COUNT_AND_NAME.match(cells[0]) if len(cells) >= 6 else None
            if named is None:
                continue
            offer = self._offer(response, int(named.group(2)), named.group(3), cells)
            if named.group(1).lower() == "reserved":
                offer["pricing_tier"] = "reserved_1y"  # priced on request: dropped as no_price
            yield offer
