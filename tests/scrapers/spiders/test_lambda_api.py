"""Lambda Cloud API instance types, on the docs' own example (no recording exists)."""

from __future__ import annotations

from scrapy.http import TextResponse

from fabricscope.scrapers.spiders.lambda_api import LambdaApiSpider
from tests.scrapers.harness import FIXTURES, parse_fixture

EXAMPLE = "lambda-instance-types_docs-example.json"


def test_docs_example_has_no_gpu_count_so_nothing_is_published():
    parsed = parse_fixture("lambda_api", EXAMPLE)
    # the example's specs give vcpus, memory and storage but no "gpus": an offer without
    # a GPU count cannot be priced per GPU, so both are dropped and the run fails
    assert parsed["dropped"] == {"no_gpu_count": 2}
    assert parsed["offers"] == []
    assert parsed["status"] == "failed"


def test_what_the_spider_reads_from_the_docs_example():
    """The raw items, before the pipelines drop them: cents become dollars."""
    spider = LambdaApiSpider()
    body = (FIXTURES / "lambda_api" / EXAMPLE).read_bytes()
    response = TextResponse(url=spider.start_urls[0], body=body, encoding="utf-8")
    items = {item["instance_type"]: item for item in spider.parse(response)}
    assert items["gpu_1x_a100"]["price"] == 0.8  # "80" US cents per hour
    assert items["gpu_4x_a6000"]["price"] == 1.1
    assert items["gpu_4x_a6000"]["availability"] == "capacity in us-az-1"
    assert items["gpu_4x_a6000"]["gpu_count"] is None  # not in the example
    assert (items["gpu_1x_a100"]["vcpus"], items["gpu_1x_a100"]["ram_gb"]) == (24, 800)


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("lambda_api", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
