"""Oracle Cloud's GPU prices per GPU-hour from its public price list API (cetools)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from scrapy.http import Response

from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.spiders.base import JsonApiSpider

_GPU_HOUR = "GPU Per Hour"  # other metrics ("Node Per Hour", "... Per Day") are not GPU-hours
# OCI's public cloud GPU shapes; "Compute Cloud@Customer" is billed on top of an on-premises
# rack rented per day, so its GPU-hour price is not a cloud offer.
_CLOUD_GPU_CATEGORY = re.compile(r"^Compute - GPU\b")
_GPU_IN_NAME = re.compile(r"\bGPU\s*-\s*(?P<gpu>.+)$")  # "OCI - Compute - GPU - H200"
# Shape generations, not GPUs ("Compute - GPU - E3"): the item does not say which GPU.
_GENERATION_CODES = frozenset({"E3", "E4"})
_ON_DEMAND = "PAY_AS_YOU_GO"


class OracleSpider(JsonApiSpider):
    name = "oracle"
    start_urls = ["https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"]
    refresh_cron = "53 */6 * * *"
    item_attributes = {
        "provider": "oracle",
        "currency": "USD",
        "pricing_tier": "on_demand",
        "price_basis": "per_gpu",  # metricName "GPU Per Hour"
        "obtained_by": "api",
    }
    records_path = ("items",)

    def parse_record(self, record: Any, response: Response) -> Iterator[RawOffer]:
        if not isinstance(record, dict) or not record.get("partNumber"):
            self.count_skip("unknown_record")
            return
        if record.get("metricName") != _GPU_HOUR:
            self.count_skip("not_gpu_hour")
            return
        if not _CLOUD_GPU_CATEGORY.match(record.get("serviceCategory") or ""):
            self.count_skip("not_cloud_gpu")
            return
        name = " ".join(str(record.get("displayName", "")).split())
        gpu = _GPU_IN_NAME.search(name)
        gpu_name = gpu["gpu"] if gpu and gpu["gpu"] not in _GENERATION_CODES else None
        for localization in record.get("currencyCodeLocalizations") or []:
            if localization.get("currencyCode") != "USD":
                continue
            for price in localization.get("prices") or []:
                if price.get("model") != _ON_DEMAND:
                    self.count_skip("other_price_model")
                    continue
                yield RawOffer(
                    instance_type=f"{name} ({record['partNumber']})",
                    gpu_name=gpu_name,
                    gpu_count=1,
                    price=price.get("value"),
                    source_url=response.url,
                )
