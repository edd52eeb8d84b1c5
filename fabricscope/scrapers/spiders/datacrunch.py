"""DataCrunch's (now Verda's) instance tables: on-demand, dynamic and spot prices per instance."""

from __future__ import annotations

from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders.base import LayoutSpider, node_text

_PRICE_COLUMNS = {
    "On demand price": "on_demand",
    # moves with demand, updated daily, but not pre-emptible
    "Dynamic price": "dynamic",
    "Spot price": "spot",
}
_REQUIRED = {"Instance name", "GPU model", "GPU", "CPU", "RAM", "VRAM", "On demand price"}


class DatacrunchSpider(LayoutSpider):
    name = "datacrunch"
    start_urls = ["https://datacrunch.io/products"]
    refresh_cron = "37 */6 * * *"
    item_attributes = {
        "provider": "datacrunch",
        "currency": "USD",
        "price_basis": "per_instance",  # "$29.10/h" for the 8-GPU instance
        "obtained_by": "scraped",
    }
    layouts = ("parse_instance_tables",)

    def parse_instance_tables(self, response: Response) -> Iterator[RawOffer]:
        """2025 (datacrunch.io/products): one table per GPU, a row per instance size."""
        for row in response.xpath("//tr[td]"):
            # the header row of this row's table; the recorded excerpt has no <table> tag
            anchor = row.xpath("preceding::th[normalize-space() = 'Instance name'][1]")
            headers = [node_text(th) for th in anchor + anchor.xpath("following-sibling::th")]
            cells = dict(zip(headers, (node_text(td) for td in row.xpath("td")), strict=False))
            if not cells.keys() >= _REQUIRED or len(row.xpath("td")) != len(headers):
                continue
            count = parse_number(cells["GPU"])
            vram = parse_number(cells["VRAM"])  # total for the instance: per GPU is VRAM / GPUs
            for column, tier in _PRICE_COLUMNS.items():
                if column not in cells:
                    continue
                yield RawOffer(
                    instance_type=cells["Instance name"],
                    gpu_name=cells["GPU model"],
                    gpu_count=cells["GPU"],
                    gpu_memory_gb=vram / count if vram and count else None,
                    vcpus=cells["CPU"],
                    ram_gb=cells["RAM"],
                    pricing_tier=tier,
                    price=cells[column],
                    source_url=response.url,
                )
