"""Azure GPU virtual machines from the Azure Retail Prices API (no key needed).

Records are at ``Items``; ``NextPageLink`` (when present) is the next page. The API
does not say which GPUs a size has: ``GPU_SIZES`` maps the sizes whose GPUs
Microsoft's size documentation states; any other item is skipped (counted as
``fabricscope/skipped/gpus_not_stated``), never guessed. Linux prices only: a
"Windows" product includes the Windows licence. Dev/test rates need a Visual Studio
subscription and are skipped. A reservation's ``retailPrice`` is the price of the
whole term although ``unitOfMeasure`` says "1 Hour" (the docs' own example: E64 v4,
1 Year, 25007.0), so it is divided by the term's hours (8760 a year).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from scrapy import Request
from scrapy.http import Response, TextResponse

from fabricscope.scrapers.items import RawItem, RawOffer
from fabricscope.scrapers.spiders.base import JsonApiSpider

HOURS_PER_YEAR = 8760
RESERVATION_YEARS = {"1 Year": 1, "3 Years": 3}
FILTER = "serviceName eq 'Virtual Machines' and contains(armSkuName, 'Standard_N')"

# armSkuName -> (GPU as Microsoft's size table names it, GPUs per VM, GB per GPU).
# Each of these series has one size. Source: MicrosoftDocs/azure-docs
# articles/virtual-machines/sizes/gpu-accelerated/includes/*-series-specs.md
# ("Accelerators" row): nd-h100-v5 "8 GPUs, NVIDIA H100 (NVLink) 80 GiB";
# nd-mi300x-v5 "8 GPUs, AMD MI300X 192 GiB"; nd-a100-v4 "8 GPUs, NVIDIA A100 (NVLink)
# 40 GiB"; ndm-a100-v4 "8 GPUs, NVIDIA A100 (NVLink) 80 GiB". (A later edition of the
# H100/A100 tables says "Nvidia PCIe ..." while the series summary says NVLink 4.0;
# the names below are kept as published and left for gpus.csv to map, or not.)
GPU_SIZES: dict[str, tuple[str, int, float]] = {
    "Standard_ND96isr_H100_v5": ("NVIDIA H100 (NVLink)", 8, 80),
    "Standard_ND96isr_MI300X_v5": ("AMD MI300X", 8, 192),
    "Standard_ND96asr_v4": ("NVIDIA A100 (NVLink)", 8, 40),
    "Standard_ND96amsr_A100_v4": ("NVIDIA A100 (NVLink)", 8, 80),
}


def tier_and_price(item: dict[str, Any]) -> tuple[str, float] | None:
    """The pricing tier and hourly price of one item, or None for a rate we do not publish."""
    price = item.get("retailPrice")
    if not isinstance(price, int | float) or isinstance(price, bool):
        return None
    kind = item.get("type")
    if kind == "Reservation":
        years = RESERVATION_YEARS.get(str(item.get("reservationTerm")))
        return (f"reserved_{years}y", price / (HOURS_PER_YEAR * years)) if years else None
    if kind != "Consumption" or item.get("unitOfMeasure") != "1 Hour":
        return None  # DevTestConsumption and anything not priced by the hour
    meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    return ("spot" if "Spot" in meter or "Low Priority" in meter else "on_demand"), price


class AzureRetailSpider(JsonApiSpider):
    name = "azure_retail"
    start_urls = ["https://prices.azure.com/api/retail/prices?$filter=" + quote(FILTER, safe="(),")]
    refresh_cron = "5 */6 * * *"
    item_attributes = {
        "provider": "azure",
        "price_basis": "per_instance",
        "obtained_by": "api",
    }
    records_path = ("Items",)

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawItem | Request]:
        yield from super().parse(response, **kwargs)
        try:
            body = response.json() if isinstance(response, TextResponse) else None
        except ValueError:
            body = None
        next_page = body.get("NextPageLink") if isinstance(body, dict) else None
        if next_page:
            yield response.follow(next_page, callback=self.parse)

    def parse_record(self, record: Any, response: Response) -> Iterator[RawOffer]:
        if not isinstance(record, dict):
            return
        size = GPU_SIZES.get(str(record.get("armSkuName")))
        if size is None:
            self.count_skip("gpus_not_stated")
            return
        if "Windows" in str(record.get("productName")):
            self.count_skip("windows")
            return
        priced = tier_and_price(record)
        if priced is None:
            self.count_skip("rate_not_published")
            return
        gpu_name, gpu_count, memory = size
        tier, price = priced
        yield RawOffer(
            instance_type=record["armSkuName"],
            region=record.get("armRegionName"),
            gpu_name=gpu_name,
            gpu_count=gpu_count,
            gpu_memory_gb=memory,
            pricing_tier=tier,
            price=price,
            currency=record.get("currencyCode"),
            source_url=response.url,
        )
