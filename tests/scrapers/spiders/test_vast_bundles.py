"""Vast.ai search offers API, on the docs' own example response (no recording exists)."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

EXAMPLE = "vast-bundles-get_docs-example.json"


def test_docs_example_offer():
    parsed = parse_fixture("vast_bundles", EXAMPLE)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    [offer] = parsed["offers"]
    assert offer["provider"] == "vast_ai" and offer["obtained_by"] == "api"
    # dph_total is the whole offer's price per hour, on demand
    assert (offer["price_usd_per_hour"], offer["price_basis"], offer["pricing_tier"]) == (
        0.45,
        "per_instance",
        "on_demand",
    )
    assert (offer["gpu_name"], offer["gpu_count"]) == ("RTX 4090", 1)
    # no machine_id in the example: the offer id names it; no gpu_ram, no geolocation
    assert offer["instance_type"] == "1x RTX 4090 (offer 12345)"
    assert offer["gpu_memory_gb"] is None and offer["region"] is None
    assert offer["gpu_model"] is None  # "RTX 4090" is not in gpus.csv
    assert parsed["stats"]["fabricscope/gpu_unmapped/RTX 4090"] == 1


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("vast_bundles", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
