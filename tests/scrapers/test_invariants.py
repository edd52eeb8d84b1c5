"""What must hold for every source's every recording, whatever the provider."""

from __future__ import annotations

import pytest
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings

from tests.scrapers.harness import manifest, parse_fixture

CASES = [
    (name, entry["file"], entry["url"])
    for name in sorted(SpiderLoader.from_settings(get_project_settings()).list())
    for entry in manifest(name)
    if entry.get("status", 200) == 200 and not entry.get("expect_failure")
]


@pytest.mark.parametrize(("source", "file", "url"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_recordings_parse_into_valid_items(source, file, url):
    parsed = parse_fixture(source, file, url)
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["offers"] or parsed["fabric_facts"]
    for offer in parsed["offers"]:
        assert offer["source"] == source
        assert offer["price_usd_per_hour"] > 0 and offer["price_usd_per_gpu_hour"] > 0
        assert offer["pricing_tier"] and offer["price_basis"] and offer["currency"]
        assert offer["gpu_count"] >= 1
        assert offer["source_url"].startswith(("http://", "https://"))
        assert offer["observed_at"]
        # a canonical model implies the provider named a GPU
        assert offer["gpu_model"] is None or offer["gpu_name"]
    for fact in parsed["fabric_facts"]:
        assert fact["evidence"].strip() and fact["source_url"]
        assert fact["fabric_class"]
