"""Crusoe's GPU instance prices from its pricing page (one card per GPU model)."""

from __future__ import annotations

from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider, squash

# The table heading names the price columns of every card, left to right.
_TIERS = {"On-demand": "on_demand", "Current spot": "spot"}


class CrusoeSpider(LayoutSpider):
    name = "crusoe"
    start_urls = ["https://www.crusoe.ai/cloud/pricing"]
    refresh_cron = "29 */6 * * *"
    item_attributes = {
        "provider": "crusoe",
        "currency": "USD",
        "price_basis": "per_gpu",  # "$3.90/GPU-hr"
        "obtained_by": "scraped",
    }
    layouts = ("parse_gpu_cards",)

    def parse_gpu_cards(self, response: Response) -> Iterator[RawOffer]:
        """2025 (Webflow CMS list): heading "GPU model | On-demand | Current spot", then cards.

        A card has the model ("NVIDIA H100"), a memory tag ("80GB"), a form tag ("HGX",
        "NVL72") and one price cell per column ("$3.90/GPU-hr" or "Contact sales").
        """
        headings = [
            squash(h.css("::text").getall())
            for h in response.css(".pricing-table-heading .pricing-heading")
        ]
        if len(headings) < 2 or headings[0] != "GPU model" or not set(headings[1:]) <= set(_TIERS):
            return
        tiers = [_TIERS[heading] for heading in headings[1:]]
        for card in response.css(".pricing_gpu-item"):
            model = squash(card.css(".pricing-item-heading::text").getall())
            memory = squash(card.css(".pricing-tag.is-dark::text").getall())
            form = squash(card.css(".pricing-tag:not(.is-dark)::text").getall())
            cells = [squash(cell.css("*::text").getall()) for cell in card.css(".pricing-rich")]
            if not (model and memory and form) or len(cells) != len(tiers):
                continue  # an incomplete card (the recorded excerpt ends inside one)
            for tier, price in zip(tiers, cells, strict=True):
                yield RawOffer(
                    instance_type=f"{model} {memory} {form}",
                    # the form tag belongs to the name: "NVIDIA H100" alone does not say SXM
                    gpu_name=f"{model} {form}",
                    gpu_memory_gb=memory,
                    gpu_count=1,  # priced per GPU-hour; the page states no instance size
                    pricing_tier=tier,
                    price=price,
                    source_url=response.url,
                )
