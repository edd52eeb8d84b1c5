"""Daytona in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_daytona_vms.csv"


def test_every_gpu_row_has_on_demand_and_spot():
    parsed = parse_fixture("skypilot_daytona", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 56, "spot": 56}
    assert parsed["stats"]["fabricscope/skipped/cpu_only"] == 8
    assert {(o["provider"], o["region"]) for o in parsed["offers"]} == {("daytona", "earth")}
    b300 = offers_by_type(parsed)[("1x-B300", "on_demand")]
    assert (b300["gpu_memory_gb"], b300["price_usd_per_hour"]) == (288, 9.1232)
    assert offers_by_type(parsed)[("1x-B300", "spot")]["price_usd_per_hour"] == 5.25


def test_consumer_and_amd_gpus_are_offers():
    parsed = parse_fixture("skypilot_daytona", CATALOG)
    assert Counter(o["gpu_name"] for o in parsed["offers"]) == {
        name: 16 for name in ("B300", "H200", "H100", "RTXPRO6000", "RTX5090", "RTX4090", "MI355X")
    }
    by_type = offers_by_type(parsed)
    mi355x = by_type[("8x-MI355X", "on_demand")]
    assert (mi355x["gpu_count"], mi355x["gpu_memory_gb"], mi355x["price_usd_per_gpu_hour"]) == (
        8,
        288,
        8.0132,
    )
    rtx = by_type[("1x-RTX4090", "spot")]
    assert (rtx["gpu_memory_gb"], rtx["price_usd_per_hour"], rtx["vcpus"], rtx["ram_gb"]) == (
        24,
        1.275,
        8,
        50,
    )
