"""Lambda's pricing page, in both layouts it has had (values from the fixtures' .source.txt)."""

from __future__ import annotations

import pytest

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE_2026 = "lambda_pricing-page_20260109.html"
PAGE_2024 = "lambda_gpu-cloud-page_20241103.html"


def test_2026_tabbed_layout():
    parsed = parse_fixture("lambda_cloud", PAGE_2026)
    assert (
        parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_tabbed_table"
    )
    offers = offers_by_type(parsed)
    b200 = offers[("8x NVIDIA B200 SXM6 180 GB", "on_demand")]
    assert (b200["gpu_model"], b200["gpu_count"], b200["price_usd_per_gpu_hour"]) == (
        "B200-SXM-180GB",
        8,
        4.99,
    )
    h100 = offers[("8x NVIDIA H100 SXM 80 GB", "on_demand")]
    assert h100["gpu_model"] == "H100-SXM-80GB"
    assert h100["price_usd_per_hour"] == pytest.approx(23.92)
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "lambda"
    # the 80 GB and 40 GB A100s stay apart
    assert offers[("8x NVIDIA A100 SXM 80 GB", "on_demand")]["gpu_model"] == "A100-SXM-80GB"
    assert offers[("8x NVIDIA A100 SXM 40 GB", "on_demand")]["gpu_model"] == "A100-SXM-40GB"
    # "Tesla V100" with 16 GB could be SXM2 or PCIe: the page does not say, Lambda's own
    # tutorial output on its 8x V100 on-demand instance does (instance_gpus.csv)
    v100 = offers[("8x NVIDIA Tesla V100 16 GB", "on_demand")]
    assert v100["gpu_model"] == "V100-SXM-16GB" and v100["gpu_name"] == "NVIDIA Tesla V100"
    assert v100["price_usd_per_gpu_hour"] == 0.55
    assert len(offers) == 5


def test_2024_named_rows_layout():
    parsed = parse_fixture("lambda_cloud", PAGE_2024, "https://lambdalabs.com/service/gpu-cloud")
    assert parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_named_rows"
    offers = offers_by_type(parsed)
    prices = {
        count: offers[(f"{count}x NVIDIA H100 SXM 80 GB", "on_demand")]["price_usd_per_gpu_hour"]
        for count in (8, 4, 2, 1)
    }
    assert prices == {8: 2.99, 4: 3.09, 2: 3.19, 1: 3.29}
    assert offers[("1x NVIDIA H100 PCIe 80 GB", "on_demand")]["gpu_model"] == "H100-PCIE-80GB"
    # "Reserved ... CONTACT SALES" is not a price: dropped as such, never published
    assert parsed["dropped"] == {"no_price": 1}
    assert not [o for o in parsed["offers"] if o["pricing_tier"] != "on_demand"]
