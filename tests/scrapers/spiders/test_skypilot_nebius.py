"""Nebius in SkyPilot's catalog: on-demand and spot prices (values read off the CSV)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_nebius_vms.csv"


def test_on_demand_and_spot_are_separate_offers():
    parsed = parse_fixture("skypilot_nebius", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 21 GPU rows, 8 of them with a spot price; 40 CPU-only rows skipped
    assert len(parsed["offers"]) == 29
    assert parsed["stats"]["fabricscope/skipped/cpu_only"] == 40
    by_type = offers_by_type(parsed)
    on_demand = by_type[("gpu-h100-sxm_8gpu-128vcpu-1600gb", "on_demand")]
    spot = by_type[("gpu-h100-sxm_8gpu-128vcpu-1600gb", "spot")]
    assert (on_demand["price_usd_per_hour"], spot["price_usd_per_hour"]) == (23.6, 10.0)
    assert on_demand["price_usd_per_gpu_hour"] == 2.95
    assert (on_demand["provider"], on_demand["region"], on_demand["gpu_count"]) == (
        "nebius",
        "eu-north1",
        8,
    )
    assert on_demand["gpu_model"] == "H100-SXM-80GB"  # bare "H100", "sxm" in the type
    b200 = by_type[("gpu-b200-sxm_8gpu-160vcpu-1792gb", "on_demand")]
    assert (b200["gpu_model"], b200["price_usd_per_hour"]) == ("B200-SXM-180GB", 44.0)
    l40s = by_type[("gpu-l40s-a_1gpu-8vcpu-32gb", "on_demand")]
    assert (l40s["gpu_model"], l40s["gpu_memory_gb"]) == ("L40S-PCIE-48GB", 48)
    # no spot price in the row: no spot offer
    assert ("gpu-l40s-a_1gpu-8vcpu-32gb", "spot") not in by_type


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_nebius", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
