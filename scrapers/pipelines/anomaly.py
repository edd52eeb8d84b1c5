"""Quarantine prices far from what the last good snapshot says that GPU costs.

A per-GPU-hour price more than 3x, or under 1/3 of, the median for the same GPU
model and tier in the serving snapshot is kept aside with its reason, not
published. With fewer than 3 reference prices there is nothing to compare with.
Whatever the GPU, known or not, a price per GPU-hour above ``MAX_USD_PER_GPU_HOUR``
is no price (a parsing slip, a placeholder, 1e308) and is kept aside too.
"""

from __future__ import annotations

import json
from pathlib import Path

from scrapy.exceptions import DropItem

from scrapers.pipelines import FabricscopePipeline
from warehouse.db import WarehouseError, read_frame
from warehouse.load import QuarantinedItem
from warehouse.models import FabricFact, Offer, utc_now

FACTOR = 3.0
MIN_REFERENCE_PRICES = 3
# The dearest GPU-hour in the recorded catalogs is 18 USD (Oracle's GB300 shape); no cloud
# lists one at 500, so above that is a slip, never a price, whatever the GPU.
MAX_USD_PER_GPU_HOUR = 500.0


# The medians every spider of one crawl compares with, read once before any of them publishes
# (scrapers/tools.py): a source compared with a snapshot its siblings are still changing
# would quarantine differently from run to run.
MEDIANS_SETTING = "FABRICSCOPE_ANOMALY_MEDIANS"


def reference_medians(path: Path) -> dict[tuple[str, str], float]:
    """Median USD per GPU-hour per (GPU model, tier) in the serving snapshot."""
    if not path.is_file():
        return {}
    try:
        _, frame = read_frame(
            path,
            "select gpu_model, pricing_tier, median(price_usd_per_gpu_hour) as median "
            "from offers_current where gpu_model is not null "
            "group by all having count(*) >= ?",
            [MIN_REFERENCE_PRICES],
        )
    except WarehouseError:
        return {}
    return {(row.gpu_model, row.pricing_tier): float(row.median) for row in frame.itertuples()}


def medians_setting(medians: dict[tuple[str, str], float]) -> str:
    return json.dumps([[model, tier, value] for (model, tier), value in sorted(medians.items())])


class AnomalyPipeline(FabricscopePipeline):
    medians: dict[tuple[str, str], float]

    def open_spider(self) -> None:
        given = self.crawler.settings.get(MEDIANS_SETTING)
        if given is not None:  # fixed for the whole crawl
            self.medians = {(m, t): float(v) for m, t, v in json.loads(given)}
            return
        self.medians = reference_medians(
            Path(self.crawler.settings.get("FABRICSCOPE_WAREHOUSE", ""))
        )

    def process_item(self, item: Offer | FabricFact) -> Offer | FabricFact:
        if not isinstance(item, Offer):
            return item
        if item.price_usd_per_gpu_hour > MAX_USD_PER_GPU_HOUR:
            self._quarantine(
                item,
                "price_implausible",
                f"{item.price_usd_per_gpu_hour:.4g} USD/GPU-h is above the "
                f"{MAX_USD_PER_GPU_HOUR:g} no cloud lists",
            )
        if item.gpu_model is None:
            return item
        median = self.medians.get((item.gpu_model, item.pricing_tier.value))
        if median is None:
            return item
        ratio = item.price_usd_per_gpu_hour / median
        if 1 / FACTOR <= ratio <= FACTOR:
            return item
        self._quarantine(
            item,
            "price_anomaly",
            f"{item.price_usd_per_gpu_hour:.2f} USD/GPU-h is {ratio:.2f}x the "
            f"median {median:.2f} for {item.gpu_model} {item.pricing_tier.value}",
        )
        return item  # not reached: _quarantine raises

    def _quarantine(self, item: Offer, kind: str, why: str) -> None:
        reason = f"{kind}: {why}"
        self.run.quarantined.append(
            QuarantinedItem("offer", reason, item.model_dump(mode="json"), utc_now())
        )
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"fabricscope/quarantined/{kind}")
        raise DropItem(reason)
