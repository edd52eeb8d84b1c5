"""Mithril in SkyPilot's catalog: every price is a placeholder, so nothing is published."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_mithril_vms.csv"


def test_placeholder_prices_are_dropped_and_the_run_fails():
    parsed = parse_fixture("skypilot_mithril", CATALOG)
    # Price == SpotPrice (1.0 / 8.0) on all 4 rows: the fetcher's minimum price, not a price
    assert parsed["dropped"] == {"no_price": 4}
    assert parsed["offers"] == []
    assert parsed["status"] == "failed"


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_mithril", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
