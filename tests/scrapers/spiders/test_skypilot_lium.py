"""Lium in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_lium_vms.csv"


def offer(parsed, instance_type, region):
    return next(
        o for o in parsed["offers"] if (o["instance_type"], o["region"]) == (instance_type, region)
    )


def test_one_offer_per_type_and_country():
    parsed = parse_fixture("skypilot_lium", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 34
    assert {(o["provider"], o["pricing_tier"]) for o in parsed["offers"]} == {("lium", "on_demand")}
    # one type, several countries, each its own price and host
    assert offer(parsed, "RTX3090_8x", "DE")["price_usd_per_hour"] == 1.76
    assert offer(parsed, "RTX3090_8x", "JP")["price_usd_per_hour"] == 1.28
    b200 = offer(parsed, "B200_8x", "FI")
    assert (b200["gpu_count"], b200["vcpus"], b200["ram_gb"], b200["price_usd_per_gpu_hour"]) == (
        8,
        240,
        1338,
        6.5318,
    )


def test_odd_memory_sizes_are_kept_as_stated():
    parsed = parse_fixture("skypilot_lium", CATALOG)
    # SizeInMiB is per GPU (TotalGpuMemoryInMiB, inside the GPU item, is not read):
    # L40S 46080 MiB = 45 GB (its datasheet says 48), B200 183296 MiB = 179 GB
    assert offer(parsed, "L40S_2x", "US")["gpu_memory_gb"] == 45
    assert offer(parsed, "L40_4x", "US")["gpu_memory_gb"] == 45
    assert offer(parsed, "B200_8x", "US")["gpu_memory_gb"] == 179
    assert offer(parsed, "B300_8x", "CA")["gpu_memory_gb"] == 269
    assert offer(parsed, "RTX5090_1x", "US")["gpu_memory_gb"] == 32
