from __future__ import annotations

import pytest
from scrapy.utils.test import get_crawler

from fabricscope.scrapers.items import RawFabricFact, RawOffer
from fabricscope.scrapers.spiders.lambda_cloud import LambdaCloudSpider


@pytest.fixture
def crawler(tmp_path):
    """A real crawler and spider (no engine) for driving one pipeline at a time."""
    crawler = get_crawler(
        LambdaCloudSpider,
        {"FABRICSCOPE_WAREHOUSE": str(tmp_path / "none.duckdb"), "FABRICSCOPE_RAW_DIR": ""},
    )
    crawler.spider = LambdaCloudSpider.from_crawler(crawler)
    return crawler


@pytest.fixture
def raw_offer():
    def make(**fields):
        base = dict(
            provider="lambda",
            instance_type="8x H100",
            gpu_name="NVIDIA H100 SXM",
            gpu_count=8,
            gpu_memory_gb=80.0,
            pricing_tier="on_demand",
            price_basis="per_gpu",
            price=2.99,
            currency="USD",
            source_url="https://lambda.ai/pricing",
            obtained_by="scraped",
        )
        base.update(fields)
        return RawOffer(**base)

    return make


@pytest.fixture
def raw_fact():
    def make(**fields):
        base = dict(
            provider="voltage_park",
            instance_type="H100 IB",
            fabric_class="infiniband",
            source_url="https://www.voltagepark.com/pricing",
            evidence="3200 Gbps Infiniband",
            obtained_by="scraped",
            source_grade="provider",
        )
        base.update(fields)
        return RawFabricFact(**base)

    return make
