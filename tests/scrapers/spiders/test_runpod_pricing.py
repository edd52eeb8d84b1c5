"""RunPod's pricing page JSON-LD (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE = "runpod_pricing-page_20260810.html"


def test_secure_and_community_cloud_are_separate_offers():
    parsed = parse_fixture("runpod_pricing", PAGE)
    assert parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_json_ld"
    offers = offers_by_type(parsed)
    h100 = offers[("H100 SXM (secure cloud)", "on_demand")]
    assert (h100["gpu_model"], h100["gpu_count"], h100["price_usd_per_gpu_hour"]) == (
        "H100-SXM-80GB",
        1,
        2.99,
    )
    assert h100["price_basis"] == "per_gpu" and h100["provider"] == "runpod"
    assert offers[("H100 SXM (community cloud)", "on_demand")]["price"] == 2.69
    assert offers[("H200 (secure cloud)", "on_demand")]["price"] == 4.39
    assert offers[("H200 (community cloud)", "on_demand")]["price"] == 3.59
    # community above secure for L4, as published
    assert offers[("L4 (community cloud)", "on_demand")]["price"] == 0.44
    assert offers[("L4 (secure cloud)", "on_demand")]["price"] == 0.39
    assert offers[("B300 (secure cloud)", "on_demand")]["gpu_model"] == "B300-SXM-288GB"
    assert len(offers) == 38 and parsed["dropped"] == {}


def test_ambiguous_names_stay_unmapped():
    offers = offers_by_type(parse_fixture("runpod_pricing", PAGE))
    # no memory or form factor on the page: "H200", "A100 PCIe", "A100 SXM" are not guessed
    for gpu in ("H200", "A100 PCIe", "A100 SXM"):
        assert offers[(f"{gpu} (secure cloud)", "on_demand")]["gpu_model"] is None


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("runpod_pricing", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed" and parsed["stats"]["fabricscope/layout_unknown"] == 1
