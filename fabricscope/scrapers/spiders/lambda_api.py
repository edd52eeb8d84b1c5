"""Lambda's instance types from its Cloud API (GET /api/v1/instance-types).

Documented response: ``data`` maps each type name to ``instance_type`` (``name``,
``description``, ``gpu_description``, ``price_cents_per_hour``, ``specs`` with
``vcpus``, ``memory_gib``, ``storage_gib``, ``gpus``) and
``regions_with_capacity_available``. The price is the whole instance's, in US cents
(divided by 100 here), and the same in every region: one offer per type, with the
regions that have capacity now as its availability.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from scrapy import Request
from scrapy.http import Response, TextResponse

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders.base import FabricscopeSpider

CENTS_PER_USD = 100


def _region_names(regions: Any) -> list[str]:
    if not isinstance(regions, list):
        return []
    return [str(r["name"]) for r in regions if isinstance(r, dict) and r.get("name")]


class LambdaApiSpider(FabricscopeSpider):
    name = "lambda_api"
    start_urls = ["https://cloud.lambda.ai/api/v1/instance-types"]
    refresh_cron = "33 */6 * * *"
    item_attributes = {
        "provider": "lambda",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_instance",
        "obtained_by": "api",
    }

    async def start(self) -> AsyncIterator[Request]:
        """The API needs a key (``FABRICSCOPE_LAMBDA_API_KEY``); without one, no credentials."""
        key = self.settings.get("FABRICSCOPE_LAMBDA_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        for url in self.start_urls:
            yield Request(url, headers=headers)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawOffer]:
        try:
            body = response.json() if isinstance(response, TextResponse) else None
        except ValueError:
            body = None
        types = body.get("data") if isinstance(body, dict) else None
        if not isinstance(types, dict) or not all(
            isinstance(entry, dict) and isinstance(entry.get("instance_type"), dict)
            for entry in types.values()
        ):
            self.layout_unknown(response, "no data.{name}.instance_type mapping")
            return
        for key, entry in types.items():
            kind = entry["instance_type"]
            specs = kind.get("specs") if isinstance(kind.get("specs"), dict) else {}
            cents = parse_number(kind.get("price_cents_per_hour"))
            regions = _region_names(entry.get("regions_with_capacity_available"))
            yield RawOffer(
                instance_type=kind.get("name") or key,
                gpu_name=kind.get("gpu_description"),
                gpu_count=specs.get("gpus"),
                vcpus=specs.get("vcpus"),
                ram_gb=specs.get("memory_gib"),  # GiB as published
                price=cents / CENTS_PER_USD if cents is not None else None,
                availability=(
                    "capacity in " + ", ".join(regions) if regions else "no capacity now"
                ),
                source_url=response.url,
            )
