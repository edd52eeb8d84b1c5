"""Prime Intellect (a broker) in SkyPilot's catalog: the provider is the row's prefix."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_primeintellect_vms.csv"


def offer(parsed, instance_type, region, tier="on_demand"):
    return next(
        o
        for o in parsed["offers"]
        if (o["instance_type"], o["region"], o["pricing_tier"]) == (instance_type, region, tier)
    )


def test_provider_from_the_prefix_and_unknown_prefixes_dropped():
    parsed = parse_fixture("skypilot_primeintellect", CATALOG)
    assert parsed["status"] == "ok"
    assert Counter(o["provider"] for o in parsed["offers"]) == {
        "datacrunch": 36,
        "hyperstack": 20,
        "oblivus": 13,
        "lambda": 12,
        "crusoe": 9,
        "nebius": 7,
        "latitude": 2,
    }
    # dc_wildebeest, dc_roan, primecompute: not guessed, counted and dropped
    assert parsed["dropped"] == {"invalid_provider": 8}
    stats = parsed["stats"]
    assert {k.rsplit("/", 1)[1]: v for k, v in stats.items() if "unknown_prefix" in k} == {
        "dc_wildebeest": 6,
        "dc_roan": 1,
        "primecompute": 1,
    }
    assert stats["fabricscope/skipped/cpu_only"] == 75
    lambda_a100 = offer(parsed, "lambdalabs__8xA100_80GB__240__1800", "AU")
    assert (lambda_a100["provider"], lambda_a100["price_usd_per_hour"]) == ("lambda", 14.32)


def test_memory_is_divided_by_the_gpu_count():
    parsed = parse_fixture("skypilot_primeintellect", CATALOG)
    # SizeInMiB 655360 for 8x A100 80GB: all GPUs together, 81920 MiB = 80 GB each
    a100 = offer(parsed, "lambdalabs__8xA100_80GB__240__1800", "US")
    assert (a100["gpu_count"], a100["gpu_memory_gb"], a100["vcpus"], a100["ram_gb"]) == (
        8,
        80,
        240,
        1800,
    )
    assert offer(parsed, "hyperstack__1xA100_80GB__28__120", "CA")["gpu_memory_gb"] == 80
    assert offer(parsed, "datacrunch__8xH200_141GB__176__1450", "FI")["gpu_memory_gb"] == 141


def test_spot_rows_are_the_spot_offers_of_their_base_type():
    parsed = parse_fixture("skypilot_primeintellect", CATALOG)
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 85, "spot": 14}
    assert not any(o["instance_type"].endswith("__SPOT") for o in parsed["offers"])
    base = "datacrunch__1xA100_80GB__22__120"
    assert offer(parsed, base, "FI")["price_usd_per_hour"] == 1.12
    spot = offer(parsed, base, "FI", "spot")
    assert (spot["provider"], spot["price_usd_per_hour"], spot["gpu_memory_gb"]) == (
        "datacrunch",
        0.53,
        80,
    )
    assert "fabricscope/skipped/price_on_spot_row" not in parsed["stats"]


def test_zones_of_one_country_are_one_offer():
    parsed = parse_fixture("skypilot_primeintellect", CATALOG)
    keys = Counter(
        (o["provider"], o["instance_type"], o["region"], o["pricing_tier"])
        for o in parsed["offers"]
    )
    assert max(keys.values()) == 1
    # listed in FIN-01 and FIN-02, on demand and __SPOT: one offer per tier, 2 zones
    for tier in ("on_demand", "spot"):
        a100 = offer(parsed, "datacrunch__2xA100_80GB__44__240", "FI", tier)
        assert a100["zones"] == 2
    crusoe = offer(parsed, "crusoecloud__10xL40S_48GB__80__1470", "US")
    assert (crusoe["zones"], crusoe["price_usd_per_hour"]) == (2, 10.0)
    assert offer(parsed, "nebius__1xH100_80GB__16__200", "FI")["zones"] == 1
