"""CoreWeave's 2023 GPU pricing page (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE_2023 = "coreweave_gpu-cloud-pricing-page_20230921.html"


def test_2023_gpu_component_prices_exclude_the_host():
    parsed = parse_fixture("coreweave", PAGE_2023)
    assert (
        parsed["status"] == "ok"
        and parsed["stats"]["fabricscope/layout"] == "parse_component_table"
    )
    offers = offers_by_type(parsed)
    hgx = offers[("NVIDIA HGX H100 (per GPU)", "on_demand")]
    assert (hgx["gpu_model"], hgx["gpu_count"], hgx["gpu_memory_gb"]) == ("H100-SXM-80GB", 1, 80)
    # $4.76 is the GPU component: CPU and RAM are billed on top
    assert hgx["price_usd_per_gpu_hour"] == 4.76 and hgx["price_basis"] == "gpu_only_host_extra"
    assert hgx["vcpus"] is None and hgx["ram_gb"] is None and hgx["provider"] == "coreweave"
    assert offers[("NVIDIA H100 PCIe (per GPU)", "on_demand")]["gpu_model"] == "H100-PCIE-80GB"
    assert offers[("A100 80GB PCIe (per GPU)", "on_demand")]["gpu_model"] == "A100-PCIE-80GB"
    assert offers[("A100 40GB PCIe (per GPU)", "on_demand")]["price_usd_per_gpu_hour"] == 2.06
    assert offers[("Quadro RTX 4000 (per GPU)", "on_demand")]["price_usd_per_gpu_hour"] == 0.24
    assert {o["price_basis"] for o in parsed["offers"]} == {"gpu_only_host_extra"}
    assert len(offers) == 12


def test_the_row_cut_mid_row_is_not_an_offer():
    """The excerpt ends after 'Tesla V100 NVLINK': no price, so no offer, and nothing invented."""
    parsed = parse_fixture("coreweave", PAGE_2023)
    assert not [o for o in parsed["offers"] if "V100" in o["instance_type"]]
    assert parsed["scraped"] == 12 and parsed["dropped"] == {}


def test_another_page_is_an_unknown_layout():
    parsed = parse_fixture("coreweave", "../hyperstack/hyperstack_gpu-pricing-page_20250724.html")
    assert parsed["status"] == "failed" and not parsed["offers"]
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
