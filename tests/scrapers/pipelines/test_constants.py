from fabricscope.scrapers.items import RawOffer
from fabricscope.scrapers.pipelines.constants import ApplyConstantsPipeline


def test_spider_constants_fill_only_missing_fields(crawler):
    pipeline = ApplyConstantsPipeline.from_crawler(crawler)
    item = pipeline.process_item(RawOffer(instance_type="x", pricing_tier="spot", price="1"))
    assert item["provider"] == "lambda" and item["currency"] == "USD"
    assert item["pricing_tier"] == "spot"  # the row's own tier wins over the spider's default
    assert item["price_basis"] == "per_gpu" and item["obtained_by"] == "scraped"
