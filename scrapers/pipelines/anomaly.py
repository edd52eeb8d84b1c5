"""Quarantine prices far from what the last good snapshot says that GPU costs.

A per-GPU-hour price more than 3x, or under 1/3 of, the median for the same GPU
model and tier in the serving snapshot is kept aside with its reason, not
published. With fewer than 3 reference prices there is nothing to compare with.
"""

from __future__ import annotations

from pathlib import Path

from scrapy.exceptions import DropItem

from scrapers.pipelines import FabricscopePipeline
from warehouse.db import WarehouseError, read_frame
from warehouse.load import QuarantinedItem
from warehouse.models import FabricFact, Offer, utc_now

FACTOR = 3.0
MIN_REFERENCE_PRICES = 3


class AnomalyPipeline(FabricscopePipeline):
    medians: dict[tuple[str, str], float]

    def open_spider(self) -> None:
        self.medians = {}
        path = Path(self.crawler.settings.get("FABRICSCOPE_WAREHOUSE", ""))
        if not path.is_file():
            return
        try:
            _, frame = read_frame(
                path,
                "select gpu_model, pricing_tier, median(price_usd_per_gpu_hour) as median "
                "from offers_current where gpu_model is not null "
                "group by all having count(*) >= ?",
                [MIN_REFERENCE_PRICES],
            )
        except WarehouseError:
            return
        self.medians = {
            (row.gpu_model, row.pricing_tier): float(row.median) for row in frame.itertuples()
        }

    def process_item(self, item: Offer | FabricFact) -> Offer | FabricFact:
        if not isinstance(item, Offer) or item.gpu_model is None:
            return item
        median = self.medians.get((item.gpu_model, item.pricing_tier.value))
        if median is None:
            return item
        ratio = item.price_usd_per_gpu_hour / median
        if 1 / FACTOR <= ratio <= FACTOR:
            return item
        reason = (
            f"price_anomaly: {item.price_usd_per_gpu_hour:.2f} USD/GPU-h is {ratio:.2f}x the "
            f"median {median:.2f} for {item.gpu_model} {item.pricing_tier.value}"
        )
        self.run.quarantined.append(
            QuarantinedItem("offer", reason, item.model_dump(mode="json"), utc_now())
        )
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("fabricscope/quarantined/price_anomaly")
        raise DropItem(reason)
