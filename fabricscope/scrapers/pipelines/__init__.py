"""Item pipelines, in order (see ITEM_PIPELINES in fabricscope/scrapers/settings.py):

raw_feed (100) -> constants (200) -> clean (300) -> normalise (400) -> validate (500)
-> anomaly (600) -> stage (700). Each drop is counted under ``fabricscope/dropped/<reason>``.
"""

from __future__ import annotations

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem

from fabricscope.scrapers.run import RunCollector


class FabricscopePipeline:
    """Base: access to the crawler, the spider's run, and counted drops."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FabricscopePipeline:
        return cls(crawler)

    @property
    def run(self) -> RunCollector:
        spider = self.crawler.spider
        assert spider is not None
        return spider.run  # type: ignore[attr-defined,no-any-return]

    def drop(self, reason: str, detail: str) -> DropItem:
        self.run.dropped[reason] += 1
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"fabricscope/dropped/{reason}")
        return DropItem(f"{reason}: {detail}")
