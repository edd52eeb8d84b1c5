"""JarvisLabs in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_jarvislabs_vms.csv"


def test_gpu_rows_are_offers_and_cpu_rows_are_counted():
    parsed = parse_fixture("skypilot_jarvislabs", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 19
    assert parsed["stats"]["fabricscope/skipped/cpu_only"] == 10
    assert {o["pricing_tier"] for o in parsed["offers"]} == {"on_demand"}
    by_type = offers_by_type(parsed)
    # columns end ...,Region,SpotPrice,Price: Price is read by name, not position
    a100 = by_type[("1x_A100-80GB_28V_112G", "on_demand")]
    assert (a100["provider"], a100["region"], a100["price_usd_per_hour"]) == (
        "jarvislabs",
        "IN2",
        1.49,
    )
    assert (a100["gpu_count"], a100["gpu_memory_gb"], a100["vcpus"], a100["ram_gb"]) == (
        1,
        80,
        28,
        112,
    )
    h200 = by_type[("8x_H200_224V_2400G", "on_demand")]
    assert (h200["gpu_memory_gb"], h200["price_usd_per_gpu_hour"]) == (141, 3.99)
    assert by_type[("1x_RTXPRO6000_28V_160G", "on_demand")]["region"] == "IN1"
