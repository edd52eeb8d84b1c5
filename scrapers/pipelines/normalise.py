"""Canonical GPU model, price in USD per hour and per GPU-hour."""

from __future__ import annotations

from scrapers.items import RawItem, RawOffer
from scrapers.normalise import gpu_catalog, usd_rates
from scrapers.pipelines import FabricscopePipeline

_PER_GPU_BASES = {"per_gpu", "gpu_only_host_extra"}


class NormalisePipeline(FabricscopePipeline):
    def process_item(self, item: RawItem) -> RawItem:
        name = item.get("gpu_name")
        memory = item.get("gpu_memory_gb") if isinstance(item, RawOffer) else None
        hint = item.get("instance_type") if isinstance(item, RawOffer) else None
        model = gpu_catalog().canonical(name, memory, hint)
        if name and model is None:
            assert self.crawler.stats is not None
            self.crawler.stats.inc_value("fabricscope/gpu_unmapped")
            self.crawler.stats.inc_value(f"fabricscope/gpu_unmapped/{name}")
        item["gpu_model"] = model
        if isinstance(item, RawOffer):
            self._usd(item)
        return item

    def _usd(self, item: RawOffer) -> None:
        currency = item.get("currency")
        rate = usd_rates().get(currency) if currency else None
        if rate is None:
            raise self.drop("no_fx_rate", f"{item.get('instance_type')!r}: currency {currency!r}")
        count = item.get("gpu_count")
        if not count:
            raise self.drop("no_gpu_count", f"{item.get('instance_type')!r}")
        usd = float(item["price"]) * rate
        per_gpu = item.get("price_basis") in _PER_GPU_BASES
        item["price_usd_per_hour"] = round(usd * count if per_gpu else usd, 6)
        item["price_usd_per_gpu_hour"] = round(usd if per_gpu else usd / count, 6)
