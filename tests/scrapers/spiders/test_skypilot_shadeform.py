"""Shadeform (a broker) in SkyPilot's catalog: the provider is the row's prefix."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_shadeform_vms.csv"


def test_provider_from_the_instance_type_prefix():
    parsed = parse_fixture("skypilot_shadeform", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 118 rows; Denvr's Gaudi 2 node is an AI accelerator, not a GPU: skipped and counted
    assert len(parsed["offers"]) == 117
    assert parsed["stats"]["fabricscope/skipped/not_a_gpu/GAUDI2"] == 1
    assert Counter(o["provider"] for o in parsed["offers"]) == {
        "massed_compute": 51,
        "lambda": 16,
        "paperspace": 16,
        "scaleway": 12,
        "crusoe": 9,
        "hyperstack": 5,
        "denvr": 3,
        "excess_supply": 4,
        "vultr": 1,
    }
    by_type = offers_by_type(parsed)
    a6000 = by_type[("lambdalabs_A6000x4", "on_demand")]
    assert (a6000["provider"], a6000["region"], a6000["price_usd_per_hour"]) == (
        "lambda",
        "dallas-usa-3",
        4.36,
    )
    assert (a6000["gpu_model"], a6000["gpu_count"]) == ("A6000-PCIE-48GB", 4)


def test_memory_is_already_in_gb():
    by_type = offers_by_type(parse_fixture("skypilot_shadeform", CATALOG))
    h200 = by_type[("excesssupply_H200x8", "on_demand")]
    # SizeInMiB holds 141 (GB) here, not 141 MiB
    assert (h200["gpu_memory_gb"], h200["price_usd_per_gpu_hour"]) == (141, 4.0)
    assert ("denvr_Gaudi2x8", "on_demand") not in by_type  # not a GPU


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture(
        "skypilot_shadeform", "../lambda_cloud/lambda_pricing-page_20260109.html"
    )
    assert parsed["status"] == "failed"
