"""Nebius's prices page, GPU table (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE_2026 = "nebius_prices-page_20260712.html"


def test_2026_preemptible_is_spot_and_on_demand_is_on_demand():
    parsed = parse_fixture("nebius", PAGE_2026)
    assert (
        parsed["status"] == "ok"
        and parsed["stats"]["fabricscope/layout"] == "parse_highlight_tables"
    )
    offers = offers_by_type(parsed)
    h100 = offers[("NVIDIA HGX H100 (per GPU)", "on_demand")]
    assert (h100["gpu_model"], h100["gpu_count"], h100["price_usd_per_gpu_hour"]) == (
        "H100-SXM-80GB",
        1,
        3.85,
    )
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "nebius"
    assert (h100["vcpus"], h100["ram_gb"]) == (16, 200)
    assert offers[("NVIDIA HGX H100 (per GPU)", "spot")]["price_usd_per_gpu_hour"] == 2.15
    b200 = offers[("NVIDIA HGX B200 (per GPU)", "on_demand")]
    assert (b200["gpu_model"], b200["price_usd_per_gpu_hour"]) == ("B200-SXM-180GB", 7.15)
    assert offers[("NVIDIA HGX B300 (per GPU)", "spot")]["price_usd_per_gpu_hour"] == 4.30
    assert offers[("NVIDIA HGX H200 (per GPU)", "on_demand")]["gpu_model"] == "H200-SXM-141GB"
    assert offers[("NVIDIA RTX PRO 6000 (per GPU)", "on_demand")]["price_usd_per_gpu_hour"] == 1.80


def test_2026_l40s_rows_name_the_gpu_apart_from_the_host():
    offers = offers_by_type(parse_fixture("nebius", PAGE_2026))
    intel = offers[("NVIDIA L40S with Intel CPU (per GPU)", "on_demand")]
    assert (intel["gpu_name"], intel["gpu_model"]) == ("NVIDIA L40S", "L40S-PCIE-48GB")
    assert intel["price_usd_per_gpu_hour"] == 1.82  # "from $1.82"
    # "16-192" vCPUs and "96-1152" GB are ranges: no single value
    assert intel["vcpus"] is None and intel["ram_gb"] is None
    assert offers[("NVIDIA L40S with AMD CPU (per GPU)", "spot")]["price_usd_per_gpu_hour"] == 0.74


def test_2026_contact_us_rows_are_dropped_as_no_price():
    """GB300 NVL72 and GB200 NVL72: '––' preemptible, 'Contact us' on-demand."""
    parsed = parse_fixture("nebius", PAGE_2026)
    assert parsed["dropped"] == {"no_price": 4}
    assert not [o for o in parsed["offers"] if "NVL72" in o["instance_type"]]
    assert len(parsed["offers"]) == 14


def test_another_page_is_an_unknown_layout():
    parsed = parse_fixture("nebius", "../datacrunch/datacrunch_products-page_20250808.html")
    assert parsed["status"] == "failed" and not parsed["offers"]
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
