"""Apply what a spider declares true of all its items (``item_attributes``) once."""

from __future__ import annotations

from fabricscope.scrapers.items import RawItem
from fabricscope.scrapers.pipelines import FabricscopePipeline


class ApplyConstantsPipeline(FabricscopePipeline):
    def process_item(self, item: RawItem) -> RawItem:
        constants = getattr(self.crawler.spider, "item_attributes", {})
        for name, value in constants.items():
            if name in item.fields and item.get(name) in (None, ""):
                item[name] = value
        return item
