"""Hyperstack's per-GPU prices: on-demand, reservation and spot sections of one page."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import LayoutSpider, node_text

# Section title -> (pricing tier, header of its price column). A reservation's tier
# depends on its term, read from the section itself (see _reserved_tier).
_SECTIONS = {
    "On-Demand GPU": ("on_demand", "Pricing Per Hour"),
    "Spot VM": ("spot", "Spot VM"),
    "Reservation": ("reserved", "Starting from"),
}
_TERM = re.compile(r"\b(\d+|one|two|three|six)[\s-]*(month|year)s?\b", re.IGNORECASE)
_WORDS = {"one": 1, "two": 2, "three": 3, "six": 6}
_TIER_BY_MONTHS = {
    1: "reserved_1m",
    3: "reserved_3m",
    6: "reserved_6m",
    12: "reserved_1y",
    24: "reserved_2y",
    36: "reserved_3y",
}
# the section title: the nearest span before a card that is not inside a card
_TITLE = "preceding::span[not(ancestor::div[contains(@class, 'page-price_card_main')])][1]"


def _reserved_tier(text: str) -> str | None:
    """The reserved_* tier of the one term a section states, else None (never assumed)."""
    months = {
        (_WORDS.get(n.lower()) or int(n)) * (12 if unit.lower() == "year" else 1)
        for n, unit in _TERM.findall(text)
    }
    return _TIER_BY_MONTHS.get(months.pop()) if len(months) == 1 else None


class HyperstackSpider(LayoutSpider):
    name = "hyperstack"
    start_urls = ["https://www.hyperstack.cloud/gpu-pricing"]
    refresh_cron = "29 */6 * * *"
    item_attributes = {
        "provider": "hyperstack",
        "currency": "USD",
        "price_basis": "per_gpu",  # one row per GPU model, priced per GPU-hour
        "obtained_by": "scraped",
    }
    layouts = ("parse_price_cards",)

    def parse_price_cards(self, response: Response) -> Iterator[RawOffer]:
        """2025 (HubSpot): a card per section, each a title then a div table of GPU rows."""
        sections = []
        for card in response.css(".page-price_card_main"):
            title = node_text(card.xpath(_TITLE))
            if title not in _SECTIONS:
                continue  # CPU, storage... sections
            headers = [node_text(h) for h in card.css(".page-price_card_head_item")]
            rows = [
                [node_text(c) for c in row.css(".page-price_card_row_item_col")]
                for row in card.css(".page-price_card_row_item")
            ]
            sections.append((title, headers, rows, f"{title} {node_text(card)}"))
        # VRAM is only in the on-demand table; the other sections name the same models
        memory = {
            row[0]: row[headers.index("VRAM (GB)")]
            for _, headers, rows, _ in sections
            if "VRAM (GB)" in headers
            for row in rows
            if len(row) == len(headers)
        }
        for title, headers, rows, text in sections:
            tier, price_header = _SECTIONS[title]
            if headers[:1] != ["GPU Model"] or price_header not in headers:
                continue
            if tier == "reserved":
                tier = _reserved_tier(text)
                if tier is None:
                    # "Starting from" with no term on the page: no reserved_* tier to give
                    self.count_skip("reservation_term_unstated", len(rows))
                    self.logger.warning(f"{title}: no reservation term stated; rows skipped")
                    continue
            price = headers.index(price_header)
            for row in rows:
                if len(row) != len(headers) or not row[0]:
                    continue
                yield RawOffer(
                    instance_type=f"{row[0]} (per GPU)",
                    gpu_name=row[0],
                    gpu_count=1,
                    gpu_memory_gb=memory.get(row[0]),
                    # "Max pCPUs / RAM per GPU" are ceilings, not what one GPU gets: unknown
                    pricing_tier=tier,
                    price=row[price],
                    source_url=response.url,
                )
