"""Oracle's cetools price list, GPU subset (values from the fixture's .source.txt)."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

RESPONSE = "oracle_cetools-products-gpu-subset_20261001.json"


def by_part(parsed):
    return {o["instance_type"].rsplit("(", 1)[1].rstrip(")"): o for o in parsed["offers"]}


def test_gpu_hour_prices():
    parsed = parse_fixture("oracle", RESPONSE)
    assert parsed["status"] == "ok"
    offers = by_part(parsed)
    h100 = offers["B98415"]
    assert h100["instance_type"] == "Oracle Cloud Infrastructure - Compute - GPU - H100 (B98415)"
    assert (h100["price_usd_per_gpu_hour"], h100["gpu_count"], h100["pricing_tier"]) == (
        10,
        1,
        "on_demand",
    )
    assert (h100["price_basis"], h100["obtained_by"], h100["provider"]) == (
        "per_gpu",
        "api",
        "oracle",
    )
    assert (offers["B110978"]["gpu_model"], offers["B110978"]["price"]) == ("B200-SXM-180GB", 14)
    assert (offers["B110979"]["gpu_model"], offers["B110979"]["price"]) == ("GB200-NVL-186GB", 16)
    assert (offers["B109485"]["gpu_model"], offers["B109485"]["price"]) == ("MI300X-OAM-192GB", 6)
    assert (offers["B95909"]["gpu_model"], offers["B95909"]["price"]) == ("A10-PCIE-24GB", 2)
    assert offers["B95907"]["price"] == 4  # "A100 - v2"
    assert offers["B110519"]["price"] == 10  # H200
    assert len(offers) == 18 and parsed["dropped"] == {}


def test_names_that_do_not_say_which_gpu_stay_unknown():
    offers = by_part(parse_fixture("oracle", RESPONSE))
    # bare "H100"/"H200"/"A100" are ambiguous; "E3"/"E4"/"X7"/"V2" are shape generations
    for part in ("B98415", "B110519", "B95907", "B109480"):
        assert offers[part]["gpu_model"] is None and offers[part]["gpu_name"]
    for part in ("B92740", "B93544", "B88517", "B88518", "B89734"):
        assert offers[part]["gpu_name"] is None and offers[part]["gpu_model"] is None


def test_what_is_not_a_cloud_gpu_hour_is_skipped():
    parsed = parse_fixture("oracle", RESPONSE)
    # VMware node-hours and per-day possession charges are not GPU-hour prices
    assert parsed["stats"]["fabricscope/skipped/not_gpu_hour"] == 5
    # Compute Cloud@Customer GPU-hours are billed on top of an on-premises rack
    assert parsed["stats"]["fabricscope/skipped/not_cloud_gpu"] == 3
    assert not [o for o in parsed["offers"] if "Cloud@Customer" in o["instance_type"]]
    assert not [o for o in parsed["offers"] if "VMware" in o["instance_type"]]


def test_a_response_it_does_not_know_fails_the_run():
    parsed = parse_fixture("oracle", "../runpod_graphql/runpod_graphql-gpuTypes_2026-09.json")
    assert parsed["status"] == "failed" and parsed["stats"]["fabricscope/layout_unknown"] == 1
