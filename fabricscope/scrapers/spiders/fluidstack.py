"""FluidStack's on-demand and 1-year GPU prices from its pricing table."""

from __future__ import annotations

from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider, squash

_MEMORY = "VRAM (GB)"
_TIERS = {"On-Demand Price (/hr)": "on_demand", "1 Year price (/hr)": "reserved_1y"}


class FluidstackSpider(LayoutSpider):
    name = "fluidstack"
    start_urls = ["https://www.fluidstack.io/pricing"]
    refresh_cron = "37 */6 * * *"
    item_attributes = {
        "provider": "fluidstack",
        "currency": "USD",
        # Each row is one GPU: its other columns read "Max vCPUs per GPU" and "Max RAM (GB)
        # per GPU", and the price column "On-Demand Price (/hr)". The page does not say that
        # CPU or RAM is billed on top of that price, so this is not "gpu_only_host_extra".
        "price_basis": "per_gpu",
        "obtained_by": "scraped",
    }
    layouts = ("parse_pricing_table",)

    def parse_pricing_table(self, response: Response) -> Iterator[RawOffer]:
        """2025 (Webflow table): model, VRAM (GB), max vCPUs/RAM per GPU, two price columns."""
        for table in response.css("table.pricing_table"):
            headers = [squash(th.css("*::text").getall()) for th in table.css("thead th")]
            tiers = {i: _TIERS[h] for i, h in enumerate(headers) if h in _TIERS}
            if _MEMORY not in headers or not tiers:
                continue
            memory_column = headers.index(_MEMORY)
            for row in table.css("tbody tr"):
                cells = [squash(cell.css("*::text").getall()) for cell in row.xpath("./th|./td")]
                if len(cells) != len(headers) or not cells[0]:
                    continue
                for column, tier in tiers.items():
                    yield RawOffer(
                        instance_type=cells[0],
                        gpu_name=cells[0],
                        gpu_memory_gb=cells[memory_column],
                        # vCPUs and RAM are maxima per GPU ("Max ... per GPU"), not what an
                        # instance comes with, so they are not published as its size
                        gpu_count=1,
                        pricing_tier=tier,
                        price=cells[column],  # "n/a" is no price: dropped as such
                        source_url=response.url,
                    )
