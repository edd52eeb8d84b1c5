"""RunPod's per-GPU prices in its two clouds, from the public GraphQL API (no key)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import JsonApiSpider

QUERY = "query { gpuTypes { id displayName memoryInGb securePrice communityPrice } }"
# Per GPU-hour in USD; 0 (or null) means "not offered in that cloud", never a free GPU.
_CLOUDS = (("securePrice", "secure cloud"), ("communityPrice", "community cloud"))


class RunpodGraphqlSpider(JsonApiSpider):
    name = "runpod_graphql"
    start_urls = ["https://api.runpod.io/graphql"]
    refresh_cron = "47 */6 * * *"
    item_attributes = {
        "provider": "runpod",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_gpu",
        "obtained_by": "api",
    }
    records_path = ("data", "gpuTypes")

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(
                url,
                method="POST",
                body=json.dumps({"query": QUERY}),
                headers={"Content-Type": "application/json"},
                callback=self.parse,
            )

    def parse_record(self, record: Any, response: Response) -> Iterator[RawOffer]:
        if not isinstance(record, dict) or not record.get("id"):
            self.count_skip("unknown_record")
            return
        gpu = record["id"]  # RunPod's GPU type id, e.g. "NVIDIA H100 80GB HBM3"
        if " MIG " in gpu:
            # "... MIG 1g.24gb" is a slice of one GPU: no whole-GPU count fits it
            self.count_skip("mig_slice")
            return
        for field, cloud in _CLOUDS:
            price = record.get(field)
            if not price:
                self.count_skip("not_offered")
                continue
            yield RawOffer(
                instance_type=f"{gpu} ({cloud})",
                gpu_name=gpu,
                gpu_memory_gb=record.get("memoryInGb") or None,
                gpu_count=1,
                price=price,
                source_url=response.url,
            )
