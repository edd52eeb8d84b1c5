"""Yotta in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_yotta_vms.csv"


def test_the_gpu_count_is_accelerator_count():
    parsed = parse_fixture("skypilot_yotta", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 8
    by_type = offers_by_type(parsed)
    # GpuInfo says Count 1 on every row; AcceleratorCount 8 (and 8 x 32607 MiB in all)
    eight = by_type[("8x112v952g_NVIDIA_GeForce_RTX_5090_32G_SECURE", "on_demand")]
    assert (eight["provider"], eight["region"], eight["gpu_name"], eight["gpu_count"]) == (
        "yotta",
        "us-east-2",
        "RTX5090",
        8,
    )
    assert (eight["price_usd_per_hour"], eight["price_usd_per_gpu_hour"]) == (5.2, 0.65)
    assert by_type[("2x60v230g_NVIDIA_GeForce_RTX_5090_32G_SECURE", "on_demand")]["gpu_count"] == 2
    # 32607 MiB per GPU, as stated (not 32768)
    assert eight["gpu_memory_gb"] == 31.84
