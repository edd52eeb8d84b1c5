import pytest
from scrapy.exceptions import DropItem

from scrapers.pipelines.clean import CleanPipeline


@pytest.mark.parametrize(
    ("published", "amount"),
    [("$2.99 / GPU / hr", 2.99), ("$1,234.50/mo", 1234.5), (3, 3.0), ("2.49", 2.49)],
)
def test_prices_are_read_from_text(crawler, raw_offer, published, amount):
    item = CleanPipeline.from_crawler(crawler).process_item(raw_offer(price=published))
    assert item["price"] == amount


@pytest.mark.parametrize("published", ["CONTACT SALES", "Coming soon", "", None, "—"])
def test_no_price_is_dropped_and_counted(crawler, raw_offer, published):
    with pytest.raises(DropItem, match="no_price"):
        CleanPipeline.from_crawler(crawler).process_item(raw_offer(price=published))
    assert crawler.stats.get_value("fabricscope/dropped/no_price") == 1
    assert crawler.spider.run.dropped["no_price"] == 1


def test_a_currency_on_the_page_that_contradicts_the_spider_is_refused(crawler, raw_offer):
    with pytest.raises(DropItem, match="currency_conflict"):
        CleanPipeline.from_crawler(crawler).process_item(raw_offer(price="€2.10", currency="USD"))


def test_text_is_trimmed_and_numbers_read(crawler, raw_offer):
    item = CleanPipeline.from_crawler(crawler).process_item(
        raw_offer(
            instance_type="  8x   H100 ", gpu_memory_gb="80 GB", ram_gb="1,800 GiB", region="  "
        )
    )
    assert item["instance_type"] == "8x H100" and item["gpu_memory_gb"] == 80.0
    assert item["ram_gb"] == 1800.0 and item["region"] is None


def test_fabric_yes_no_unknown(crawler, raw_fact):
    item = CleanPipeline.from_crawler(crawler).process_item(
        raw_fact(rdma="yes", gpudirect_rdma="unknown", multi_node="no")
    )
    assert (item["rdma"], item["gpudirect_rdma"], item["multi_node"]) == (True, None, False)
