"""RunPod in SkyPilot's catalog: a sample (its first page), one row per data centre."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_runpod_vms_sample.csv"


def offer(parsed, instance_type, region, tier="on_demand"):
    return next(
        o
        for o in parsed["offers"]
        if (o["instance_type"], o["region"], o["pricing_tier"]) == (instance_type, region, tier)
    )


def test_data_centres_of_one_region_are_one_offer():
    parsed = parse_fixture("skypilot_runpod", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 79 rows: 1x/2x/3x in 8 regions, 4x in 2; on demand and spot each
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 26, "spot": 26}
    assert sum(o["zones"] for o in parsed["offers"] if o["pricing_tier"] == "on_demand") == 79
    us = offer(parsed, "1x_A100-80GB_SECURE", "US")
    assert (us["provider"], us["zones"], us["price_usd_per_hour"]) == ("runpod", 14, 1.64)
    assert offer(parsed, "1x_A100-80GB_SECURE", "US", "spot")["price_usd_per_hour"] == 0.82
    assert offer(parsed, "4x_A100-80GB_SECURE", "CA")["zones"] == 3
    # EU-SE-1 is listed under both NO and SE: each region keeps its offer
    assert offer(parsed, "2x_A100-80GB_SECURE", "NO")["zones"] == 1
    assert offer(parsed, "2x_A100-80GB_SECURE", "SE")["zones"] == 1


def test_memory_is_in_gb_and_the_name_is_runpods():
    parsed = parse_fixture("skypilot_runpod", CATALOG)
    # GpuInfo SizeInMiB 80 is 80 GB (an A100 80GB), not 80 MiB
    assert {o["gpu_memory_gb"] for o in parsed["offers"]} == {80}
    # RunPod's "A100 PCIe" (GpuInfo.Name) rather than SkyPilot's "A100-80GB"
    assert {(o["gpu_name"], o["gpu_model"]) for o in parsed["offers"]} == {
        ("A100 PCIe", "A100-PCIE-80GB")
    }
    three = offer(parsed, "3x_A100-80GB_SECURE", "IS")
    assert (three["gpu_count"], three["vcpus"], three["ram_gb"]) == (3, 24, 351)
    assert (three["price_usd_per_hour"], three["price_usd_per_gpu_hour"]) == (4.92, 1.64)


def test_a_catalog_without_zones_is_not_read():
    parsed = parse_fixture("skypilot_runpod", "../skypilot_cudo/skypilot-catalog_v8_cudo_vms.csv")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
