"""Lambda in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

import pytest

from tests.scrapers.harness import parse_fixture

CATALOG = "skypilot-catalog_v8_lambda_vms.csv"


def offers(parsed, instance_type):
    return [o for o in parsed["offers"] if o["instance_type"] == instance_type]


def test_one_offer_per_region_at_the_global_price():
    parsed = parse_fixture("skypilot_lambda", CATALOG)
    assert parsed["status"] == "ok"
    # 22 GPU types x 17 regions; the 34 CPU-only rows are not GPU offers
    assert len(parsed["offers"]) == 374
    assert parsed["stats"]["fabricscope/skipped/cpu_only"] == 34
    assert parsed["dropped"] == {}
    h100 = offers(parsed, "gpu_8x_h100_sxm5")
    assert len({o["region"] for o in h100}) == 17
    assert {(o["price_usd_per_hour"], o["price_usd_per_gpu_hour"]) for o in h100} == {(31.92, 3.99)}
    first = h100[0]
    assert (first["provider"], first["pricing_tier"], first["price_basis"]) == (
        "lambda",
        "on_demand",
        "per_instance",
    )
    assert first["obtained_by"] == "catalog"
    # bare "H100" (SXM or PCIe?) is settled by the instance type's "sxm5"; 81920 MiB is
    # 80 GB per GPU
    assert (first["gpu_name"], first["gpu_model"], first["gpu_memory_gb"]) == (
        "H100",
        "H100-SXM-80GB",
        80,
    )
    # no form factor in the name or type: Lambda's own page settles it (instance_gpus.csv)
    bare = offers(parsed, "gpu_8x_a100")[0]
    assert (bare["gpu_name"], bare["gpu_model"]) == ("A100", "A100-SXM-40GB")
    # Lambda sells 1x A100 40 GB as SXM and as PCIe: its dashboard lists both, gpu_1x_a100
    # is the PCIe one (instance_gpus.csv), never a guess from the bare name
    single = offers(parsed, "gpu_1x_a100")[0]
    assert (single["gpu_name"], single["gpu_model"]) == ("A100", "A100-PCIE-40GB")
    assert not [o for o in parsed["offers"] if o["pricing_tier"] != "on_demand"]


def test_gpu_models_and_per_gpu_memory():
    parsed = parse_fixture("skypilot_lambda", CATALOG)
    b200 = offers(parsed, "gpu_8x_b200_sxm6")[0]
    assert (b200["gpu_model"], b200["gpu_count"], b200["gpu_memory_gb"]) == (
        "B200-SXM-180GB",
        8,
        180,
    )
    assert b200["price_usd_per_hour"] == pytest.approx(53.52)
    gh200 = offers(parsed, "gpu_1x_gh200")[0]
    assert (gh200["gpu_model"], gh200["gpu_memory_gb"]) == ("GH200-96GB", 96)
    # TotalGpuMemoryInMiB equals the per-GPU size in this catalog: never multiplied
    a6000 = offers(parsed, "gpu_4x_a6000")[0]
    assert (a6000["gpu_model"], a6000["gpu_memory_gb"]) == ("A6000-PCIE-48GB", 48)
    # "A100-80GB" alone is SXM or PCIe; the type's "sxm4" says which
    assert offers(parsed, "gpu_8x_a100_80gb_sxm4")[0]["gpu_model"] == "A100-SXM-80GB"


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_lambda", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
