"""Voltage Park's on-demand H100 cards: one price and one fabric per card."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawFabricFact, RawItem, RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider

_ON_DEMAND = re.compile(r"^On-demand,\s*(?P<fabric>.+)$", re.IGNORECASE)
# "1-1016 HGX H100 GPUs for your bursts and experimentation."
_GPU_RANGE = re.compile(r"^(?P<least>\d+)\s*-\s*(?P<most>\d+)\s+(?P<gpu>.+?)\s+GPUs\b")
_GBPS = re.compile(r"(\d[\d,]*)\s*Gbps", re.IGNORECASE)
_FABRICS = {"infiniband": "infiniband", "ethernet": "ethernet"}
GPUS_PER_NODE = 8  # an HGX H100 node holds 8 GPUs: more than that spans nodes

_CARD_PARTS = (
    "//div[contains(@class, 'text-eyebrow')]"
    " | //div[contains(@class, 'heading-style-h3')]"
    " | //div[contains(@class, 'pricing11_feature')]/div[contains(@class, 'text-m')]"
)


class VoltageParkSpider(LayoutSpider):
    name = "voltage_park"
    start_urls = ["https://www.voltagepark.com/pricing"]
    refresh_cron = "43 */6 * * *"
    item_attributes = {
        "provider": "voltage_park",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_gpu",  # "$1.99/hr" beside "1-1016 HGX H100 GPUs": per GPU-hour
        "obtained_by": "scraped",
        "source_grade": "provider",  # its own pricing page
    }
    layouts = ("parse_plan_cards",)

    def _cards(self, response: Response) -> list[list[tuple[str, str]]]:
        """(class, text) of each card's eyebrow, price and features, in page order."""
        cards: list[list[tuple[str, str]]] = []
        for node in response.xpath(_CARD_PARTS):
            kind = "eyebrow" if "text-eyebrow" in node.attrib.get("class", "") else ""
            if not kind:
                kind = "price" if "heading-style-h3" in node.attrib["class"] else "feature"
            text = " ".join(" ".join(node.css("*::text").getall()).split())
            if kind == "eyebrow":
                cards.append([])
            if cards and text:
                cards[-1].append((kind, text))
        return cards

    def parse_plan_cards(self, response: Response) -> Iterator[RawItem]:
        """2025 (Webflow pricing11 cards): eyebrow "On-Demand, Ethernet", "$1.99/hr", features."""
        for card in self._cards(response):
            eyebrow = next(text for kind, text in card if kind == "eyebrow")
            price = next((text for kind, text in card if kind == "price"), None)
            features = [text for kind, text in card if kind == "feature"]
            on_demand = _ON_DEMAND.match(eyebrow)
            gpus = next((m for m in map(_GPU_RANGE.match, features) if m), None)
            if on_demand is None or price is None or gpus is None:
                continue  # e.g. "Long-Term Reserve": no term to price it on
            fabric = on_demand["fabric"]
            fabric_class = next((c for word, c in _FABRICS.items() if word in fabric.lower()), None)
            if fabric_class is None:
                continue
            instance_type = f"{gpus['gpu']}, {fabric}"
            least, most = int(gpus["least"]), int(gpus["most"])
            gbps = _GBPS.search(fabric)
            yield RawOffer(
                instance_type=instance_type,
                gpu_name=gpus["gpu"],
                gpu_count=least,  # the smallest number of GPUs the card sells
                price=price,
                source_url=response.url,
            )
            yield RawFabricFact(
                instance_type=instance_type,
                gpu_name=gpus["gpu"],
                fabric_class=fabric_class,
                fabric_gbps_per_node=gbps.group(1) if gbps else None,
                multi_node=True if most > GPUS_PER_NODE else None,
                max_cluster_gpus=most,
                evidence=f"{eyebrow}: {gpus.string}",
                source_url=response.url,
            )
