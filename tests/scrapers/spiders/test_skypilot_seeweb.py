"""Seeweb in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

import ast
import csv

from tests.scrapers.harness import FIXTURES, offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_seeweb_vms.csv"


def test_gpu_rows_are_offers_and_cpu_rows_are_counted():
    parsed = parse_fixture("skypilot_seeweb", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert len(parsed["offers"]) == 21
    assert parsed["stats"]["fabricscope/skipped/cpu_only"] == 48
    assert {(o["provider"], o["region"], o["pricing_tier"]) for o in parsed["offers"]} == {
        ("seeweb", "it-fr2", "on_demand")
    }
    h200 = offers_by_type(parsed)[("ECS8GPU10", "on_demand")]
    assert (h200["gpu_count"], h200["gpu_memory_gb"], h200["price_usd_per_hour"]) == (8, 141, 20.8)


def test_l40s_is_published_as_spelled():
    l40s = offers_by_type(parse_fixture("skypilot_seeweb", CATALOG))[("ECS1GPU7", "on_demand")]
    assert (l40s["gpu_name"], l40s["gpu_memory_gb"], l40s["price_usd_per_hour"]) == (
        "L40s",
        48,
        0.85,
    )


def test_ecs1gpu8_is_four_h100s():
    h100 = offers_by_type(parse_fixture("skypilot_seeweb", CATALOG))[("ECS1GPU8", "on_demand")]
    assert (h100["gpu_name"], h100["gpu_count"], h100["gpu_memory_gb"]) == ("H100", 4, 80)
    assert (h100["price_usd_per_hour"], h100["price_usd_per_gpu_hour"]) == (8.4, 2.1)
    # the count the catalog gives agrees with its own GpuInfo: Count 4, 4 x 81920 MiB
    with (FIXTURES / "skypilot_seeweb" / CATALOG).open(newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["InstanceType"] == "ECS1GPU8")
    info = ast.literal_eval(row["GpuInfo"])
    assert (row["AcceleratorCount"], info["Gpus"][0]["Count"]) == ("4", 4.0)
    assert info["TotalGpuMemoryInMiB"] == 4 * info["Gpus"][0]["MemoryInfo"]["SizeInMiB"]
