"""Quarantine a price that jumped far from what the same offer last cost.

A per-GPU-hour price more than 3x, or under 1/3 of, the price the published snapshot holds
for the same offer (source, provider, instance type, region and tier) is kept aside with
its reason, not published: a price that moves that far between two runs is far likelier a
parsing slip (a per-GPU price read as per-node, a currency or unit change) than a real
change, and the operator sees both figures. Prices are not compared across providers: the
market is wider than 3x for the same GPU (a marketplace L40S at 0.60 USD against a cloud's
2.76 median; an AWS T4 whose host is 96 vCPUs), and a check that compared them would publish
different offers on a first refresh (no history) and on the next. An offer seen for the first
time has nothing to compare with. Whatever the GPU, known or not, a price per GPU-hour above
``MAX_USD_PER_GPU_HOUR`` is no price (a parsing slip, a placeholder, 1e308) and is kept
aside too.
"""

from __future__ import annotations

import json
from pathlib import Path

from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines import FabricscopePipeline
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import WarehouseError, read_frame
from fabricscope.warehouse.load import QuarantinedItem
from fabricscope.warehouse.models import FabricFact, Offer, utc_now

FACTOR = 3.0
# The dearest GPU-hour in the recorded catalogs is 18 USD (Oracle's GB300 shape); no cloud
# lists one at 500, so above that is a slip, never a price, whatever the GPU.
MAX_USD_PER_GPU_HOUR = 500.0

OfferKey = tuple[str, str, str, str, str]  # source, provider, instance type, region, tier

# The prices every spider of one crawl compares with, read once before any of them publishes
# (fabricscope/scrapers/tools.py): a source compared with a snapshot its siblings are still changing
# would quarantine differently from run to run.
REFERENCE_SETTING = "FABRICSCOPE_ANOMALY_REFERENCE"


def offer_key(item: Offer) -> OfferKey:
    return (
        item.source,
        item.provider,
        item.instance_type,
        item.region or "",
        item.pricing_tier.value,
    )


def reference_prices(path: Path) -> dict[OfferKey, float]:
    """USD per GPU-hour of each offer in the published snapshot (its median, should one
    source list the same offer twice)."""
    if not path.is_file():
        return {}
    try:
        _, frame = read_frame(path, reads.sql("reference_prices"))
    except WarehouseError:
        return {}
    return {
        (row.source, row.provider, row.instance_type, row.region, row.pricing_tier): float(
            row.price
        )
        for row in frame.itertuples()
    }


def reference_setting(prices: dict[OfferKey, float]) -> str:
    return json.dumps([[*key, value] for key, value in sorted(prices.items())])


class AnomalyPipeline(FabricscopePipeline):
    reference: dict[OfferKey, float]

    def open_spider(self) -> None:
        given = self.crawler.settings.get(REFERENCE_SETTING)
        if given is not None:  # fixed for the whole crawl
            self.reference = {tuple(row[:5]): float(row[5]) for row in json.loads(given)}
            return
        self.reference = reference_prices(
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
        last = self.reference.get(offer_key(item))
        if last is None:
            return item
        ratio = item.price_usd_per_gpu_hour / last
        if 1 / FACTOR <= ratio <= FACTOR:
            return item
        self._quarantine(
            item,
            "price_jump",
            f"{item.price_usd_per_gpu_hour:.2f} USD/GPU-h is {ratio:.2f}x this offer's "
            f"last published {last:.2f}",
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
