"""Oracle Cloud in SkyPilot's catalog: availability domains collapsed per region."""

from __future__ import annotations

from collections import Counter, defaultdict

from tests.scrapers.harness import fixture_rows, parse_fixture

CATALOG = "skypilot-catalog_v8_oci_vms_gpu.csv"


def catalog_rows() -> list[dict[str, str]]:
    return fixture_rows("skypilot_oci", CATALOG)


def test_one_offer_per_shape_region_and_tier_with_its_availability_domains():
    parsed = parse_fixture("skypilot_oci", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 21 shapes in each of 44 regions; spot for 4 of them
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 924, "spot": 176}
    assert {o["provider"] for o in parsed["offers"]} == {"oracle"}
    on_demand = [o for o in parsed["offers"] if o["pricing_tier"] == "on_demand"]
    assert sum(o["zones"] for o in on_demand) == len(catalog_rows()) == 1134  # 54 ADs x 21
    h100 = next(
        o
        for o in on_demand
        if (o["instance_type"], o["region"]) == ("BM.GPU.H100.8", "us-ashburn-1")
    )
    # US-ASHBURN-AD-1..3; 80 USD/h for the whole 8-GPU shape
    assert (h100["zones"], h100["price_usd_per_hour"], h100["price_usd_per_gpu_hour"]) == (
        3,
        80,
        10,
    )
    assert (h100["gpu_count"], h100["gpu_memory_gb"], h100["vcpus"]) == (8, 80, 224)
    gb200 = next(o for o in on_demand if o["instance_type"] == "BM.GPU.GB200.4")
    assert (gb200["gpu_count"], gb200["price"], gb200["gpu_model"]) == (4, 64, "GB200-NVL-186GB")


def test_prices_are_the_same_in_every_region():
    parsed = parse_fixture("skypilot_oci", CATALOG)
    prices = defaultdict(set)
    for o in parsed["offers"]:
        prices[(o["instance_type"], o["pricing_tier"])].add(o["price"])
    assert all(len(p) == 1 for p in prices.values())
    assert prices[("BM.GPU.B200.8", "on_demand")] == {112}
    assert "fabricscope/zones/price_differs" not in parsed["stats"]


def test_spot_only_for_vm_gpu2_and_gpu3_at_half_price():
    parsed = parse_fixture("skypilot_oci", CATALOG)
    spot = [o for o in parsed["offers"] if o["pricing_tier"] == "spot"]
    assert {o["instance_type"] for o in spot} == {
        "VM.GPU2.1",
        "VM.GPU3.1",
        "VM.GPU3.2",
        "VM.GPU3.4",
    }
    on_demand = {
        (o["instance_type"], o["region"]): o["price"]
        for o in parsed["offers"]
        if o["pricing_tier"] == "on_demand"
    }
    assert all(o["price"] == on_demand[(o["instance_type"], o["region"])] / 2 for o in spot)
    v100 = next(o for o in spot if o["instance_type"] == "VM.GPU3.1")
    assert (v100["price"], v100["gpu_name"]) == (1.475, "V100")


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_oci", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
