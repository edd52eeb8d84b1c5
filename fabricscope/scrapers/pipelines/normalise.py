"""Canonical GPU model, price in USD per hour and per GPU-hour."""

from __future__ import annotations

from fabricscope.scrapers.items import RawItem, RawOffer
from fabricscope.scrapers.normalise import gpu_catalog, usd_rates
from fabricscope.scrapers.pipelines import FabricscopePipeline
from fabricscope.warehouse.gpus import GpuMatch

_PER_GPU_BASES = {"per_gpu", "gpu_only_host_extra"}


class NormalisePipeline(FabricscopePipeline):
    def process_item(self, item: RawItem) -> RawItem:
        match = self._gpu(item)
        if match.reason is not None:
            # counted by reason and by name (or instance type), e.g.
            # gpu_unmapped/ambiguous_form_factor/H200: one look at a run's stats says what
            # to add to gpus.csv (an alias, a row) or to instance_gpus.csv
            assert self.crawler.stats is not None
            self.crawler.stats.inc_value("fabricscope/gpu_unmapped")
            self.crawler.stats.inc_value(f"fabricscope/gpu_unmapped/{match.reason}")
            self.crawler.stats.inc_value(f"fabricscope/gpu_unmapped/{match.reason}/{match.subject}")
        item["gpu_model"] = match.model
        if isinstance(item, RawOffer):
            self._usd(item)
        return item

    def _gpu(self, item: RawItem) -> GpuMatch:
        """The instance type's documented GPU, else the published name with the form factor
        the instance type names (and, for an offer, its memory per GPU)."""
        offer = isinstance(item, RawOffer)
        return gpu_catalog().identify(
            item.get("gpu_name"),
            item.get("gpu_memory_gb") if offer else None,
            item.get("instance_type"),
            item.get("provider"),
        )

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
