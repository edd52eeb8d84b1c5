"""Collect the run's valid items for the warehouse; a repeated offer key is dropped."""

from __future__ import annotations

from fabricscope.scrapers.pipelines import FabricscopePipeline
from fabricscope.warehouse.models import FabricFact, Offer


class StagePipeline(FabricscopePipeline):
    def open_spider(self) -> None:
        self._offer_keys: set[tuple[str, str, str | None, str]] = set()
        self._fact_keys: set[tuple[str, str]] = set()

    def process_item(self, item: Offer | FabricFact) -> Offer | FabricFact:
        if isinstance(item, Offer):
            if item.key in self._offer_keys:
                raise self.drop("duplicate", f"offer {item.key} seen twice in this run")
            self._offer_keys.add(item.key)
            self.run.offers.append(item)
        else:
            key = (item.provider, item.instance_type)
            if key in self._fact_keys:
                raise self.drop("duplicate", f"fabric fact {key} seen twice in this run")
            self._fact_keys.add(key)
            self.run.facts.append(item)
        return item
