"""Voltage Park's on-demand cards: a price and a fabric each (values from .source.txt)."""

from __future__ import annotations

import pytest

from tests.scrapers.harness import offers_by_type, parse_fixture

PAGE = "voltagepark_pricing-page_20250712.html"
ETHERNET = "HGX H100, Ethernet"
INFINIBAND = "HGX H100, 3200 Gbps Infiniband"


def test_one_offer_per_fabric_at_its_smallest_count():
    parsed = parse_fixture("voltage_park", PAGE)
    assert parsed["status"] == "ok" and parsed["stats"]["fabricscope/layout"] == "parse_plan_cards"
    offers = offers_by_type(parsed)
    assert set(offers) == {(ETHERNET, "on_demand"), (INFINIBAND, "on_demand")}
    ethernet, infiniband = offers[(ETHERNET, "on_demand")], offers[(INFINIBAND, "on_demand")]
    assert (ethernet["gpu_count"], ethernet["price_usd_per_gpu_hour"]) == (1, 1.99)
    assert (infiniband["gpu_count"], infiniband["price_usd_per_gpu_hour"]) == (8, 2.49)
    assert infiniband["price_usd_per_hour"] == pytest.approx(19.92)
    assert {o["gpu_model"] for o in offers.values()} == {"H100-SXM-80GB"}
    assert {o["price_basis"] for o in offers.values()} == {"per_gpu"}
    assert parsed["dropped"] == {}


def test_each_card_states_its_fabric():
    parsed = parse_fixture("voltage_park", PAGE)
    facts = {f["instance_type"]: f for f in parsed["fabric_facts"]}
    assert set(facts) == {ETHERNET, INFINIBAND}
    ib = facts[INFINIBAND]
    assert (ib["fabric_class"], ib["fabric_gbps_per_node"]) == ("infiniband", 3200)
    assert (ib["multi_node"], ib["max_cluster_gpus"]) == (True, 1016)
    assert ib["evidence"] == (
        "On-demand, 3200 Gbps Infiniband: 8-1016 HGX H100 GPUs for your bursts and experimentation."
    )
    eth = facts[ETHERNET]
    assert (eth["fabric_class"], eth["fabric_gbps_per_node"]) == ("ethernet", None)
    assert (eth["multi_node"], eth["max_cluster_gpus"]) == (True, 1016)
    # neither card mentions RDMA: unknown, not assumed
    assert eth["rdma"] is None and ib["rdma"] is None
    assert {f["obtained_by"] for f in facts.values()} == {"scraped"}
    assert {f["provider"] for f in facts.values()} == {"voltage_park"}


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("voltage_park", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed" and parsed["stats"]["fabricscope/layout_unknown"] == 1
