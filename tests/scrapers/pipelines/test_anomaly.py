import pytest
from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines.anomaly import AnomalyPipeline, offer_key
from fabricscope.warehouse.models import PricingTier
from tests.helpers import make_offer


def offer(price_per_gpu):
    return make_offer(
        price_per_gpu,
        provider="lambda",
        source="lambda_cloud",
        instance_type="1x H100",
        gpu_count=1,
        price_basis="per_gpu",
        source_url="https://lambda.ai/pricing",
    )


@pytest.fixture
def pipeline(crawler):
    pipeline = AnomalyPipeline.from_crawler(crawler)
    pipeline.open_spider()  # no warehouse yet: nothing to compare with
    pipeline.reference = {offer_key(offer(2.5)): 2.5}  # this offer's last published price
    return pipeline


def test_without_reference_prices_nothing_is_quarantined(crawler):
    pipeline = AnomalyPipeline.from_crawler(crawler)
    pipeline.open_spider()
    assert pipeline.reference == {}
    assert pipeline.process_item(offer(250.0)).price == 250.0


@pytest.mark.parametrize("price", [2.0, 2.5, 7.4, 0.84])
def test_prices_near_the_offers_last_price_pass(pipeline, price):
    assert pipeline.process_item(offer(price)).price == price


@pytest.mark.parametrize("price", [250.0, 7.6, 0.8, 0.025])  # a 100x jump, and the 3x bounds
def test_a_price_that_jumped_is_quarantined_with_both_figures(crawler, pipeline, price):
    with pytest.raises(DropItem, match="price_jump"):
        pipeline.process_item(offer(price))
    kept = crawler.spider.run.quarantined
    assert len(kept) == 1 and "last published 2.50" in kept[0].reason
    assert kept[0].raw["price_usd_per_gpu_hour"] == price


@pytest.mark.parametrize(
    "other",
    [
        {"provider": "vast_ai", "source": "skypilot_vast"},  # another provider's H100
        {"region": "us-east-1"},  # the same type elsewhere
        {"pricing_tier": PricingTier.SPOT},  # another tier
        {"instance_type": "8x H100"},
    ],
)
def test_other_offers_are_never_compared_with_this_one(pipeline, other):
    """A marketplace's 0.25 USD is not a slip because a cloud sells the same GPU at 2.50:
    only the same offer's own history says a price jumped."""
    cheap = offer(0.25).model_copy(update=other)
    assert pipeline.process_item(cheap).price == 0.25


@pytest.mark.parametrize("gpu_model", ["H100-SXM-80GB", None])
def test_an_implausible_price_is_quarantined_whatever_the_gpu(crawler, gpu_model):
    pipeline = AnomalyPipeline.from_crawler(crawler)
    pipeline.open_spider()  # no reference prices: the median check has nothing to say
    item = offer(1e308).model_copy(update={"gpu_model": gpu_model})
    with pytest.raises(DropItem, match="price_implausible"):
        pipeline.process_item(item)
    [kept] = crawler.spider.run.quarantined
    assert "above the 500 no cloud lists" in kept.reason
    assert crawler.stats.get_value("fabricscope/quarantined/price_implausible") == 1
    assert pipeline.process_item(offer(18.0)).price == 18.0  # the dearest recorded GPU-hour


def test_a_crawl_hands_its_spiders_one_fixed_set_of_reference_prices(tmp_path):
    from scrapy.utils.test import get_crawler

    from fabricscope.scrapers.pipelines.anomaly import REFERENCE_SETTING, reference_setting
    from fabricscope.scrapers.spiders.lambda_cloud import LambdaCloudSpider

    fixed = {offer_key(offer(2.5)): 2.5}
    crawler = get_crawler(
        LambdaCloudSpider,
        {
            "FABRICSCOPE_WAREHOUSE": str(tmp_path / "none.duckdb"),
            REFERENCE_SETTING: reference_setting(fixed),
        },
    )
    crawler.spider = LambdaCloudSpider.from_crawler(crawler)
    pipeline = AnomalyPipeline.from_crawler(crawler)
    pipeline.open_spider()  # the warehouse is not read again: sibling sources may be publishing
    assert pipeline.reference == fixed
