"""Azure Retail Prices API, on the docs' own example items (no recording exists)."""

from __future__ import annotations

import json

import pytest

from fabricscope.scrapers.spiders.azure_retail import GPU_SIZES, tier_and_price
from tests.scrapers.harness import FIXTURES, parse_fixture

EXAMPLES = "azure-retail-prices_docs-examples.json"


def docs_items():
    return json.loads((FIXTURES / "azure_retail" / EXAMPLES).read_text())["Items"]


def test_docs_examples_have_no_gpu_size_so_nothing_is_published():
    parsed = parse_fixture("azure_retail", EXAMPLES)
    # F16s and E64 v4 are not GPU sizes: skipped, never given a GPU; the run fails
    assert parsed["stats"]["fabricscope/skipped/gpus_not_stated"] == 3
    assert parsed["offers"] == [] and parsed["dropped"] == {}
    assert parsed["status"] == "failed"


def test_tier_and_hourly_price_of_the_docs_examples():
    dev_test, reservation, eur_spot = docs_items()
    # dev/test rates need a Visual Studio subscription: not published
    assert tier_and_price(dev_test) is None
    # a reservation's retailPrice is the whole term's: 25007 USD for 1 year
    tier, price = tier_and_price(reservation)
    assert tier == "reserved_1y" and price == pytest.approx(25007.0 / 8760)
    # Consumption with a "Spot" meter is spot, at its hourly price
    assert tier_and_price(eur_spot) == ("spot", 0.6176)


def test_only_sizes_with_stated_gpus_are_mapped():
    assert GPU_SIZES["Standard_ND96isr_H100_v5"] == ("NVIDIA H100 (NVLink)", 8, 80)
    assert GPU_SIZES["Standard_ND96isr_MI300X_v5"] == ("AMD MI300X", 8, 192)
    assert all(count == 8 for _, count, _ in GPU_SIZES.values())


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("azure_retail", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
