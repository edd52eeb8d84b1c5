"""Verda (DataCrunch) in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_verda_vms.csv"


def test_prices_per_tier_and_spot_only_types():
    parsed = parse_fixture("skypilot_verda", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 33  # 17 on demand + 16 spot, from 22 GPU rows
    by_type = offers_by_type(parsed)
    b300 = by_type[("1B300.30V", "on_demand")]
    assert (b300["provider"], b300["region"], b300["price_usd_per_hour"]) == (
        "datacrunch",
        "FIN-03",
        6.99,
    )
    assert by_type[("1B300.30V", "spot")]["price_usd_per_hour"] == 2.447
    # GpuInfo is JSON here: 268288 MiB = 262 GB per GPU, still a B300
    assert (b300["gpu_model"], b300["gpu_memory_gb"]) == ("B300-SXM-288GB", 262)
    # empty Price, SpotPrice 4.893: a spot offer only
    assert ("2B300.60V", "on_demand") not in by_type
    assert by_type[("2B300.60V", "spot")]["price_usd_per_gpu_hour"] == 2.4465
    rtx = by_type[("1RTXPRO6000.30V", "on_demand")]
    assert (rtx["gpu_name"], rtx["gpu_model"]) == ("RTX-PRO-6000", "RTXPRO6000-PCIE-96GB")
    assert by_type[("1H100.80S.32V", "on_demand")]["gpu_model"] is None  # bare "H100"


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_verda", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
