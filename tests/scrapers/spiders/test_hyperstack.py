"""Hyperstack's GPU pricing page (values from the fixture's .source.txt)."""

from __future__ import annotations

import pytest

from fabricscope.scrapers.spiders.hyperstack import _reserved_tier
from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE_2025 = "hyperstack_gpu-pricing-page_20250724.html"


def test_2025_on_demand_and_spot_sections():
    parsed = parse_fixture("hyperstack", PAGE_2025)
    assert parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_price_cards"
    offers = offers_by_type(parsed)
    on_demand = {
        name: offers[(f"{name} (per GPU)", "on_demand")]["price_usd_per_gpu_hour"]
        for name in ("NVIDIA H200 SXM", "NVIDIA H100 SXM", "NVIDIA H100 NVLink", "NVIDIA H100")
    }
    assert on_demand == {
        "NVIDIA H200 SXM": 3.50,
        "NVIDIA H100 SXM": 2.40,
        "NVIDIA H100 NVLink": 1.95,
        "NVIDIA H100": 1.90,
    }
    h100 = offers[("NVIDIA H100 SXM (per GPU)", "on_demand")]
    assert (h100["gpu_model"], h100["gpu_count"], h100["gpu_memory_gb"]) == (
        "H100-SXM-80GB",
        1,
        80,
    )
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "hyperstack"
    assert h100["vcpus"] is None and h100["ram_gb"] is None  # the page gives maxima only
    assert offers[("NVIDIA H200 SXM (per GPU)", "on_demand")]["gpu_model"] == "H200-SXM-141GB"
    assert offers[("NVIDIA A100 SXM (per GPU)", "on_demand")]["gpu_model"] == "A100-SXM-80GB"
    # a bare "NVIDIA H100" / "NVIDIA A100" does not say SXM or PCIe; Hyperstack's own docs do
    # (instance_gpus.csv: "H100-80GB-PCIe" for n3-H100x1 at 28 cores and 180 GB, "A100 80G
    # PCIe"), and its SXM parts are separate lines of the page
    assert offers[("NVIDIA H100 (per GPU)", "on_demand")]["gpu_model"] == "H100-PCIE-80GB"
    assert offers[("NVIDIA A100 (per GPU)", "on_demand")]["gpu_model"] == "A100-PCIE-80GB"
    # spot rows are the same machines as on-demand ones, on another tier
    spot = {k[0]: o["price_usd_per_gpu_hour"] for k, o in offers.items() if k[1] == "spot"}
    assert spot == {
        "NVIDIA A100 (per GPU)": 1.08,
        "NVIDIA L40 (per GPU)": 0.80,
        "NVIDIA A6000 (per GPU)": 0.40,
    }
    assert offers[("NVIDIA L40 (per GPU)", "spot")]["gpu_model"] == "L40-PCIE-48GB"
    assert offers[("NVIDIA L40 (per GPU)", "spot")]["gpu_memory_gb"] == 48
    assert len(offers) == 13 and parsed["dropped"] == {}


def test_2025_reservation_rows_without_a_term_are_not_published():
    """'Reservation Pricing ... Starting from $2.04' names no term: no reserved_* tier to give."""
    parsed = parse_fixture("hyperstack", PAGE_2025)
    assert parsed["stats"]["fabricscope/skipped/reservation_term_unstated"] == 10
    assert not [o for o in parsed["offers"] if o["pricing_tier"].startswith("reserved")]


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        ("Reservation Pricing GPU Model Starting from Reserve", None),
        ("Reservation Pricing (1-year term)", "reserved_1y"),
        ("Reserve for 12 months", "reserved_1y"),
        ("3 months", "reserved_3m"),
        ("1 year or 3 years", None),  # two terms, one price: which is it?
        ("5 months", None),  # no such tier
    ],
)
def test_reservation_term(text, tier):
    assert _reserved_tier(text) == tier


def test_another_page_is_an_unknown_layout():
    parsed = parse_fixture("hyperstack", "../nebius/nebius_prices-page_20260712.html")
    assert parsed["status"] == "failed" and not parsed["offers"]
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
