"""Hyperstack in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_hyperstack_vms.csv"


def offer(parsed, instance_type, region):
    return next(
        o for o in parsed["offers"] if (o["instance_type"], o["region"]) == (instance_type, region)
    )


def test_on_demand_offers_with_form_factor_names():
    parsed = parse_fixture("skypilot_hyperstack", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 25
    assert {(o["provider"], o["pricing_tier"]) for o in parsed["offers"]} == {
        ("hyperstack", "on_demand")
    }
    a100 = offer(parsed, "n3-A100x1", "CANADA-1")
    assert (a100["gpu_name"], a100["price_usd_per_hour"], a100["vcpus"], a100["ram_gb"]) == (
        "A100-80G-PCIe",
        1.35,
        28,
        120,
    )
    # one type in two regions, with different host memory
    assert offer(parsed, "n3-H100-SXM5x8", "CANADA-1")["ram_gb"] == 1800
    sxm = offer(parsed, "n3-H100-SXM5x8", "US-1")
    assert (sxm["gpu_name"], sxm["gpu_count"], sxm["ram_gb"]) == ("H100-80G-SXM5", 8, 960)
    assert sxm["price_usd_per_gpu_hour"] == 2.4


def test_memory_is_read_although_gpu_info_holds_a_json_null():
    parsed = parse_fixture("skypilot_hyperstack", CATALOG)
    # {'Manufacturer': null, ...}: neither JSON nor Python; SizeInMiB 81920 = 80 GB
    assert offer(parsed, "n3-A100x1", "CANADA-1")["gpu_memory_gb"] == 80
    assert offer(parsed, "n3-RTX-A4000x10", "NORWAY-1")["gpu_memory_gb"] == 16
    assert all(o["gpu_memory_gb"] for o in parsed["offers"])
