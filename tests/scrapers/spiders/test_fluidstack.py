"""FluidStack's on-demand pricing table (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE = "fluidstack_pricing-page_20250109.html"


def test_on_demand_and_one_year_prices():
    parsed = parse_fixture("fluidstack", PAGE)
    assert (
        parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_pricing_table"
    )
    offers = offers_by_type(parsed)
    h100 = offers[("Nvidia H100 PCIe", "on_demand")]
    assert (h100["gpu_model"], h100["gpu_count"], h100["price_usd_per_gpu_hour"]) == (
        "H100-PCIE-80GB",
        1,
        2.89,
    )
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "fluidstack"
    assert offers[("Nvidia H100 PCIe", "reserved_1y")]["price"] == 2.05
    assert offers[("Nvidia A100 80GB PCIe", "on_demand")]["gpu_model"] == "A100-PCIE-80GB"
    assert offers[("Nvidia A100 40GB PCIe", "reserved_1y")]["gpu_model"] == "A100-PCIE-40GB"
    assert offers[("Nvidia L40", "on_demand")]["price"] == 1.25
    # "Max vCPUs/RAM per GPU" are ceilings, not the instance's size
    assert h100["vcpus"] is None and h100["ram_gb"] is None
    assert len(offers) == 9


def test_na_placeholder_keeps_its_column():
    parsed = parse_fixture("fluidstack", PAGE)
    offers = offers_by_type(parsed)
    assert ("Nvidia H200", "on_demand") not in offers
    h200 = offers[("Nvidia H200", "reserved_1y")]
    assert h200["price"] == 2.45 and h200["gpu_memory_gb"] == 141
    # bare "H200" could be SXM or NVL: unknown, not guessed
    assert h200["gpu_model"] is None
    assert parsed["dropped"] == {"no_price": 1}


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("fluidstack", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed" and parsed["stats"]["fabricscope/layout_unknown"] == 1
