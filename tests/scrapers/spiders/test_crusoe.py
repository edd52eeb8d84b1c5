"""Crusoe's pricing page cards (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE = "crusoe_cloud-pricing-page_20251215.html"


def test_cards_give_on_demand_and_spot_prices_per_gpu_hour():
    parsed = parse_fixture("crusoe", PAGE)
    assert parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_gpu_cards"
    offers = offers_by_type(parsed)
    h100 = offers[("NVIDIA H100 80GB HGX", "on_demand")]
    assert (h100["price"], h100["price_usd_per_gpu_hour"], h100["gpu_count"]) == (3.9, 3.9, 1)
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "crusoe"
    assert h100["gpu_name"] == "NVIDIA H100 HGX" and h100["gpu_memory_gb"] == 80
    assert offers[("NVIDIA H100 80GB HGX", "spot")]["price_usd_per_gpu_hour"] == 1.6
    h200 = offers[("NVIDIA H200 141GB HGX", "on_demand")]
    assert h200["price_usd_per_gpu_hour"] == 4.29 and h200["gpu_memory_gb"] == 141
    assert set(offers) == {
        ("NVIDIA H100 80GB HGX", "on_demand"),
        ("NVIDIA H100 80GB HGX", "spot"),
        ("NVIDIA H200 141GB HGX", "on_demand"),
    }


def test_contact_sales_cells_are_dropped_as_no_price():
    parsed = parse_fixture("crusoe", PAGE)
    # GB200 and B200 in both columns, H200 spot; the A100 card is cut off in the excerpt
    assert parsed["dropped"] == {"no_price": 5}
    assert not [o for o in parsed["offers"] if "B200" in o["instance_type"]]


def test_hgx_spellings_name_the_sxm_parts():
    # HGX boards carry SXM modules: "H100 HGX" is an alias of H100-SXM-80GB in gpus.csv
    parsed = parse_fixture("crusoe", PAGE)
    models = {(o["gpu_name"], o["gpu_model"]) for o in parsed["offers"]}
    assert models == {("NVIDIA H100 HGX", "H100-SXM-80GB"), ("NVIDIA H200 HGX", "H200-SXM-141GB")}
    assert "fabricscope/gpu_unmapped" not in parsed["stats"]


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("crusoe", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed" and parsed["stats"]["fabricscope/layout_unknown"] == 1
    assert not parsed["offers"]
