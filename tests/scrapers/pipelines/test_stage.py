import pytest
from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines.stage import StagePipeline
from tests.scrapers.pipelines.test_anomaly import offer


def test_offers_are_staged_and_a_duplicate_key_is_dropped(crawler):
    pipeline = StagePipeline.from_crawler(crawler)
    pipeline.open_spider()
    pipeline.process_item(offer(2.0))
    with pytest.raises(DropItem, match="duplicate"):
        pipeline.process_item(offer(2.0))
    assert len(crawler.spider.run.offers) == 1
    assert crawler.spider.run.dropped["duplicate"] == 1
