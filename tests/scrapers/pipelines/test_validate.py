import math

import pytest
from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines.normalise import NormalisePipeline
from fabricscope.scrapers.pipelines.validate import ValidatePipeline
from fabricscope.warehouse.models import Offer


def validated(crawler, item):
    return ValidatePipeline.from_crawler(crawler).process_item(
        NormalisePipeline.from_crawler(crawler).process_item(item)
    )


def test_a_good_item_becomes_an_offer(crawler, raw_offer):
    offer = validated(crawler, raw_offer())
    assert isinstance(offer, Offer) and offer.source == "lambda_cloud"
    assert offer.observed_at == crawler.spider.run.started_at


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"price": 0.0}, "invalid_price"),
        ({"price": -1.0}, "invalid_price"),
        ({"price": math.nan}, "invalid_price"),
        ({"pricing_tier": "weekly"}, "invalid_pricing_tier"),
        ({"provider": None}, "invalid_provider"),
    ],
)
def test_bad_items_are_dropped_with_a_counted_reason(crawler, raw_offer, changes, reason):
    with pytest.raises(DropItem, match=reason):
        validated(crawler, raw_offer(**changes))
    assert crawler.stats.get_value(f"fabricscope/dropped/{reason}") == 1
