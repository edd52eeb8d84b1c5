"""DataCrunch's (Verda's) products page, B200 table (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE_2025 = "datacrunch_products-page_20250808.html"


def test_2025_b200_table_on_demand_dynamic_and_spot():
    parsed = parse_fixture("datacrunch", PAGE_2025)
    assert (
        parsed["status"] == "ok"
        and parsed["stats"]["fabricscope/layout"] == "parse_instance_tables"
    )
    offers = offers_by_type(parsed)
    on_demand = {
        name: offers[(name, "on_demand")]["price_usd_per_hour"]
        for name in ("1B200.30V", "2B200.60V", "4B200.120V", "8B200.240V")
    }
    assert on_demand == {
        "1B200.30V": 3.64,
        "2B200.60V": 7.27,
        "4B200.120V": 14.55,
        "8B200.240V": 29.10,
    }
    assert offers[("1B200.30V", "dynamic")]["price_usd_per_hour"] == 2.68
    assert offers[("1B200.30V", "spot")]["price_usd_per_hour"] == 0.80
    eight = offers[("8B200.240V", "on_demand")]
    assert (eight["gpu_model"], eight["gpu_count"], eight["price_basis"]) == (
        "B200-SXM-180GB",
        8,
        "per_instance",
    )
    assert eight["price_usd_per_gpu_hour"] == 29.10 / 8
    # VRAM is the instance's total (1440 GB); the contract keeps memory per GPU
    assert (eight["gpu_memory_gb"], eight["vcpus"], eight["ram_gb"]) == (180, 240, 1472)
    assert eight["gpu_name"] == "B200 SXM6 180GB" and eight["provider"] == "datacrunch"
    assert {tier for _, tier in offers} == {"on_demand", "dynamic", "spot"}
    assert len(offers) == 12 and parsed["dropped"] == {}


def test_another_page_is_an_unknown_layout():
    parsed = parse_fixture("datacrunch", "../lambda_cloud/lambda_gpu-cloud-page_20241103.html")
    assert parsed["status"] == "failed" and not parsed["offers"]
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
