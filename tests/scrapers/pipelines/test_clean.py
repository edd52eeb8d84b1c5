import pytest
from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines.clean import CleanPipeline


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


def test_control_characters_never_pass_and_are_counted(crawler, raw_offer):
    item = CleanPipeline.from_crawler(crawler).process_item(
        raw_offer(provider="\x1b[2J\x1b[31mevil\x1b[0m\x07 cloud\x9b1m", region="us\x00east")
    )
    assert item["provider"] == "evil cloud" and item["region"] == "us east"
    assert crawler.stats.get_value("fabricscope/cleaned/control_characters") == 2


def test_line_breaks_and_tabs_are_only_whitespace(crawler, raw_offer):
    item = CleanPipeline.from_crawler(crawler).process_item(raw_offer(instance_type="8x\n\tH100"))
    assert item["instance_type"] == "8x H100"
    assert crawler.stats.get_value("fabricscope/cleaned/control_characters") is None


@pytest.mark.parametrize("field", ["provider", "instance_type", "region", "gpu_name"])
def test_a_name_longer_than_any_real_one_is_dropped_and_counted(crawler, raw_offer, field):
    from fabricscope.scrapers.pipelines.clean import MAX_NAME_CHARS

    with pytest.raises(DropItem, match=f"name_too_long: {field} of 201 characters"):
        CleanPipeline.from_crawler(crawler).process_item(
            raw_offer(**{field: "x" * (MAX_NAME_CHARS + 1)})
        )
    assert crawler.stats.get_value("fabricscope/dropped/name_too_long") == 1
    kept = CleanPipeline.from_crawler(crawler).process_item(raw_offer(**{field: "x" * 200}))
    assert len(kept[field]) == 200
