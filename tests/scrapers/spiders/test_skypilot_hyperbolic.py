"""Hyperbolic in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_hyperbolic_vms.csv"


def test_three_h100_configurations():
    parsed = parse_fixture("skypilot_hyperbolic", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    by_type = offers_by_type(parsed)
    assert {key: o["price_usd_per_hour"] for key, o in by_type.items()} == {
        ("1x-H100-75-722", "on_demand"): 1.29,
        ("2x-H100-149-1443", "on_demand"): 2.58,
        ("3x-H100-224-2165", "on_demand"): 3.87,
    }
    three = by_type[("3x-H100-224-2165", "on_demand")]
    assert (three["provider"], three["region"], three["gpu_count"]) == ("hyperbolic", "default", 3)
    assert three["price_usd_per_gpu_hour"] == 1.29
    # 81559 MiB per GPU = 79.65 GB; the bare "H100" is settled by the catalog's own GPU name
    # "NVIDIA-H100-80GB-HBM3", the SXM5 part (instance_gpus.csv)
    assert (three["gpu_memory_gb"], three["gpu_model"]) == (79.65, "H100-SXM-80GB")
    assert (three["vcpus"], three["ram_gb"]) == (224, 2165)


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture(
        "skypilot_hyperbolic", "../lambda_cloud/lambda_pricing-page_20260109.html"
    )
    assert parsed["status"] == "failed"
