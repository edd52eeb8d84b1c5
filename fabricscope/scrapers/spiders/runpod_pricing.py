"""RunPod's on-demand GPU prices from the structured data (JSON-LD) of its pricing page."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider

_PRODUCT = re.compile(r"^(?P<gpu>.+?) GPU on Runpod$")
# Each product has one offer per cloud; they are different offers of the same GPU.
_CLOUDS = {"Secure Cloud": "secure cloud", "Community Cloud": "community cloud"}


def _graph(script: str) -> list[Any]:
    try:
        data = json.loads(script)
    except ValueError:
        return []
    graph = data.get("@graph") if isinstance(data, dict) else None
    return graph if isinstance(graph, list) else []


class RunpodPricingSpider(LayoutSpider):
    name = "runpod_pricing"
    start_urls = ["https://www.runpod.io/pricing"]
    refresh_cron = "11 */6 * * *"
    item_attributes = {
        "provider": "runpod",
        "currency": "USD",
        "pricing_tier": "on_demand",  # "B300 per-hour on-demand rate on Runpod Secure Cloud"
        "price_basis": "per_gpu",  # a product is one GPU: "On-demand B300 cloud GPU rental"
        "obtained_by": "scraped",
    }
    layouts = ("parse_json_ld",)

    def parse_json_ld(self, response: Response) -> Iterator[RawOffer]:
        """2026: schema.org @graph; Product "<GPU> GPU on Runpod" with an AggregateOffer."""
        for script in response.css("script[type='application/ld+json']::text").getall():
            for node in _graph(script):
                named = _PRODUCT.match(node.get("name", "")) if isinstance(node, dict) else None
                if named is None or node.get("@type") != "Product":
                    continue
                offers = (node.get("offers") or {}).get("offers") or []
                for offer in offers:
                    cloud = _CLOUDS.get(offer.get("name", "")) if isinstance(offer, dict) else None
                    if cloud is None:
                        continue
                    yield RawOffer(
                        instance_type=f"{named['gpu']} ({cloud})",
                        gpu_name=named["gpu"],
                        gpu_count=1,
                        price=offer.get("price"),
                        currency=offer.get("priceCurrency"),
                        source_url=response.url,
                    )
