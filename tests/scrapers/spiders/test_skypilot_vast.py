"""Vast.ai in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_vast_vms.csv"


def test_on_demand_only_and_per_gpu_memory():
    parsed = parse_fixture("skypilot_vast", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # SpotPrice is 0.00 on every row: "not provided", so no spot offer at all
    assert len(parsed["offers"]) == 67
    assert {o["pricing_tier"] for o in parsed["offers"]} == {"on_demand"}
    h200 = next(
        o
        for o in parsed["offers"]
        if o["instance_type"] == "2x-H200-32-65536" and o["region"] == "Michigan, US, NA"
    )
    assert (h200["provider"], h200["price_usd_per_hour"], h200["price_usd_per_gpu_hour"]) == (
        "vast_ai",
        5.18,
        2.59,
    )
    # SizeInMiB 287542 is both GPUs together: 143771 MiB = 140.4 GB each
    assert h200["gpu_memory_gb"] == 140.4
    # vCPUs/MemoryGiB are SkyPilot's fixed 32/64 placeholders: unknown
    assert h200["vcpus"] is None and h200["ram_gb"] is None
    b200 = next(o for o in parsed["offers"] if o["instance_type"] == "4x-B200-32-65536")
    assert (b200["gpu_model"], b200["region"]) == ("B200-SXM-180GB", ", US, NA")


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_vast", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
