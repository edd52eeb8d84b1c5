"""CUDO Compute in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_cudo_vms.csv"


def offer(parsed, instance_type, region, tier="on_demand"):
    return next(
        o
        for o in parsed["offers"]
        if (o["instance_type"], o["region"], o["pricing_tier"]) == (instance_type, region, tier)
    )


def test_every_row_is_an_on_demand_offer():
    parsed = parse_fixture("skypilot_cudo", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 143 GPU rows, SpotPrice empty on all of them
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 143}
    assert {o["provider"] for o in parsed["offers"]} == {"cudo_compute"}


def test_float_artefacts_are_the_price():
    parsed = parse_fixture("skypilot_cudo", CATALOG)
    a40 = offer(parsed, "ice-lake-a40-compute_1x2v4gb", "ca-montreal-3")
    # Price 0.36979999999999996 is kept as the number it is; USD fields are rounded
    assert a40["price"] == 0.36979999999999996
    assert (a40["price_usd_per_hour"], a40["vcpus"], a40["ram_gb"]) == (0.3698, 2, 4)
    h100 = offer(parsed, "sapphire-rapids-h100_8x96v192gb", "no-kristiansand-1")
    assert (h100["price"], h100["price_usd_per_gpu_hour"]) == (15.827200000000001, 1.9784)


def test_columns_by_header_and_the_count_from_accelerator_count():
    parsed = parse_fixture("skypilot_cudo", CATALOG)
    # columns ...,Price,Region,GpuInfo,SpotPrice; GpuInfo's Count is the string '2.0'
    a100 = offer(parsed, "epyc-genoa-a100-pcie_2x8v16gb", "no-kristiansand-1")
    assert (a100["gpu_name"], a100["gpu_count"], a100["price_usd_per_hour"]) == ("A100", 2, 3.1176)
    # SizeInMiB 81920 per GPU: an A100 80GB is 80 GB
    assert (a100["gpu_memory_gb"], a100["gpu_model"]) == (80, "A100-PCIE-80GB")
    assert offer(parsed, "intel-broadwell-v100_1x2v4gb", "us-newyork-1")["gpu_memory_gb"] == 16
