"""Vast.ai marketplace offers from its public search API (GET /api/v0/bundles/?q=...).

Documented by Vast (docs.vast.ai "search offers"; vast-ai/docs
api-reference/openapi/yaml/auto_get_api_v0_bundles_32b4bb.yaml): no API key for the
GET form, the query is JSON in ``q``, records are at ``offers``. ``dph_total`` is the
total price per hour of the whole offer (``num_gpus`` GPUs); ``gpu_ram`` and
``cpu_ram`` are in MB, and Vast's MB are binary (the docs' example card has
``gpu_ram`` 24576), so they are divided by 1024.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders.base import JsonApiSpider

MB_PER_GB = 1024
# What a renter can take now, at the fixed on-demand price.
QUERY = {
    "verified": {"eq": True},
    "rentable": {"eq": True},
    "rented": {"eq": False},
    "type": "on-demand",
    "limit": 1000,
}


def _gb(megabytes: Any) -> float | None:
    number = parse_number(megabytes)
    return round(number / MB_PER_GB, 2) if number else None


class VastBundlesSpider(JsonApiSpider):
    name = "vast_bundles"
    start_urls = [
        "https://console.vast.ai/api/v0/bundles/?q="
        + quote(json.dumps(QUERY, separators=(",", ":")), safe="")
    ]
    refresh_cron = "47 * * * *"
    item_attributes = {
        "provider": "vast_ai",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_instance",
        "obtained_by": "api",
    }
    records_path = ("offers",)

    def parse_record(self, record: Any, response: Response) -> Iterator[RawOffer]:
        if not isinstance(record, dict):
            self.count_skip("not_an_offer")
            return
        # One machine is one offer; the offer id stands in when the machine id is absent.
        machine = record.get("machine_id")
        where = f"machine {machine}" if machine is not None else f"offer {record.get('id')}"
        yield RawOffer(
            instance_type=f"{record.get('num_gpus')}x {record.get('gpu_name')} ({where})",
            region=record.get("geolocation"),
            gpu_name=record.get("gpu_name"),
            gpu_count=record.get("num_gpus"),
            gpu_memory_gb=_gb(record.get("gpu_ram")),  # per card
            vcpus=record.get("cpu_cores_effective"),
            ram_gb=_gb(record.get("cpu_ram")),
            price=record.get("dph_total"),
            source_url=response.url,
        )
