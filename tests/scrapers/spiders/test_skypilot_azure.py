"""Azure in SkyPilot's v6 catalog: its upstream oddities corrected (values off the CSV)."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import fixture_rows, parse_fixture

CATALOG = "skypilot-catalog_v6_azure_vms_gpu.csv"


def catalog_rows() -> list[dict[str, str]]:
    return fixture_rows("skypilot_azure", CATALOG)


def offers_of(parsed, instance_type):
    return {
        (o["region"], o["pricing_tier"]): o
        for o in parsed["offers"]
        if o["instance_type"] == instance_type
    }


def test_one_offer_per_size_region_and_tier():
    parsed = parse_fixture("skypilot_azure", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 165, "spot": 143}
    assert {o["provider"] for o in parsed["offers"]} == {"azure"}
    # no zones in v6, and GpuInfo is a bare name: no memory
    assert {o["zones"] for o in parsed["offers"]} == {None}
    assert {o["gpu_memory_gb"] for o in parsed["offers"]} == {None}
    a100 = offers_of(parsed, "Standard_NC24ads_A100_v4")
    assert (a100[("eastus", "on_demand")]["price"], a100[("eastus", "spot")]["price"]) == (
        3.673,
        0.444433,
    )
    assert a100[("eastus", "on_demand")]["gpu_name"] == "A100-80GB"


def test_nd_h100_v5_has_8_gpus_not_12():
    parsed = parse_fixture("skypilot_azure", CATALOG)
    rows = [r for r in catalog_rows() if r["InstanceType"] == "Standard_ND96isr_H100_v5"]
    assert {r["AcceleratorCount"] for r in rows} == {"12"}  # upstream
    nd = offers_of(parsed, "Standard_ND96isr_H100_v5")
    east = nd[("eastus", "on_demand")]
    assert (east["gpu_count"], east["price_usd_per_hour"], east["price_usd_per_gpu_hour"]) == (
        8,
        98.32,
        12.29,
    )
    assert nd[("westus", "on_demand")]["price_usd_per_gpu_hour"] == 15.977  # 127.816 / 8
    assert parsed["stats"]["fabricscope/corrected/gpu_count/Standard_ND96isr_H100_v5"] == 3


def test_a_spot_price_equal_to_on_demand_is_no_spot_offer():
    parsed = parse_fixture("skypilot_azure", CATALOG)
    copies = [r for r in catalog_rows() if r["SpotPrice"].strip() and r["SpotPrice"] == r["Price"]]
    assert {r["AcceleratorName"] for r in copies} == {"H100"} and len(copies) == 11
    h100 = [o for o in parsed["offers"] if o["gpu_name"] == "H100"]
    assert len(h100) == 11 and {o["pricing_tier"] for o in h100} == {"on_demand"}
    assert parsed["stats"]["fabricscope/skipped/spot_equals_price"] == 11


def test_partial_mi25_sizes_are_skipped_and_the_whole_one_kept():
    parsed = parse_fixture("skypilot_azure", CATALOG)
    sizes = {o["instance_type"] for o in parsed["offers"]}
    assert not sizes & {"Standard_NV4as_v4", "Standard_NV8as_v4", "Standard_NV16as_v4"}
    assert parsed["stats"]["fabricscope/skipped/fractional_gpu"] == 21  # 3 sizes x 7 regions
    whole = offers_of(parsed, "Standard_NV32as_v4")
    assert (whole[("eastus", "on_demand")]["gpu_count"], whole[("eastus", "spot")]["price"]) == (
        1,
        0.20504,
    )
    # westus lists NV32as_v4 with neither price
    assert ("westus", "on_demand") not in whole
    assert parsed["stats"]["fabricscope/skipped/no_price"] == 1


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_azure", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
