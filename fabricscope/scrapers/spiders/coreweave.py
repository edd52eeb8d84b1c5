"""CoreWeave's GPU component prices: per GPU-hour, with the host's CPU and RAM billed on top."""

from __future__ import annotations

from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider, node_text


class CoreweaveSpider(LayoutSpider):
    name = "coreweave"
    start_urls = ["http://www.coreweave.com/gpu-cloud-pricing"]
    refresh_cron = "43 */6 * * *"
    item_attributes = {
        "provider": "coreweave",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "gpu_only_host_extra",  # "GPU Component Cost Per Hour"
        "obtained_by": "scraped",
    }
    layouts = ("parse_component_table",)

    def parse_component_table(self, response: Response) -> Iterator[RawOffer]:
        """2023 (Webflow): div rows of GPU model, VRAM (GB), max vCPUs, max RAM (GB), price."""
        for body in response.css(".table-body"):
            header = node_text(body.xpath("preceding-sibling::*[1]"))
            if "GPU Component Cost Per Hour" not in header:
                continue  # another table (CPU, storage): not GPU component prices
            for row in body.css(".table-body-row"):
                cells = row.xpath("./div[contains(@class, 'w-col')]")
                if len(cells) != 5:
                    continue  # a row cut short (the recorded excerpt ends mid-row) has no price
                name, vram = node_text(cells[0]), node_text(cells[1])
                yield RawOffer(
                    instance_type=f"{name} (per GPU)",
                    gpu_name=name,
                    gpu_count=1,
                    gpu_memory_gb=vram,
                    # max vCPUs / RAM are what may be added (billed extra), not included
                    price=cells[4].xpath("string(.//strong[1])").get() or node_text(cells[4]),
                    source_url=response.url,
                )
