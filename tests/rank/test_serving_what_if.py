"""The fabric "what if" for a served model (issue 36): a replica that spans nodes serves
more tokens per GPU, for less per million tokens, on a better fabric; a replica inside one
node serves the same on every fabric class."""

from __future__ import annotations

import pytest

from fabricscope.rank.ranking import (
    SERVING_WHAT_IF_COLUMNS,
    WHAT_IF_GBPS_PER_NODE,
    rank_offers,
    what_if_changes,
    what_if_rule,
)
from tests.rank.test_serving_rank import offers, serve

ONE_NODE = "the fabric does not matter: fits one node"


def test_a_served_model_across_two_nodes_serves_more_on_infiniband_than_on_ethernet():
    """Llama 3.1 405B in bf16 (810 GB of weights) is pipelined over two 8 x H100 nodes: as if
    on plain Ethernet its tokens/s per GPU fall and its USD per million output tokens rise,
    the fabric's share of a step grows; as if on InfiniBand it serves at least as much. With
    no load every rented GPU serves, so the price per token moves against the tokens/s."""
    # a stated fabric without its bandwidth and an unstated one: both costed at the class's
    base = rank_offers(
        offers("roce", None, fabric_gbps_per_gpu=None),
        serve("llama3-405b-bf16", (8, 16), requests_per_s=None),
    )
    assert len(base.offers) == 2 and (base.offers["gpus"] == 16).all()
    ethernet = what_if_changes(base, base.what_if("ethernet")).set_index("provider")
    infiniband = what_if_changes(base, base.what_if("infiniband")).set_index("provider")
    assert ["provider", *ethernet.columns] == [
        "provider",
        *(c for c in SERVING_WHAT_IF_COLUMNS if c != "provider"),
    ]
    per_gpu = WHAT_IF_GBPS_PER_NODE["ethernet"] / 8
    assert (ethernet["fabric_what_if"] == f"ethernet at {per_gpu:g} Gb/s per GPU (what if)").all()
    assert (ethernet["fabric_gbps_what_if"] == per_gpu).all()
    assert (infiniband["fabric_gbps_what_if"] == WHAT_IF_GBPS_PER_NODE["infiniband"] / 8).all()
    slow, fast = ethernet, infiniband
    assert (fast["tokens_per_s_per_gpu_what_if"] >= slow["tokens_per_s_per_gpu_what_if"]).all()
    assert (fast["tokens_per_s_per_gpu_what_if"] > slow["tokens_per_s_per_gpu_what_if"]).any()
    assert (slow["fabric_share_what_if"] > fast["fabric_share_what_if"]).all()
    for changes in (ethernet, infiniband):
        faster = changes["tokens_per_s_per_gpu_what_if"] > changes["tokens_per_s_per_gpu"]
        slower = changes["tokens_per_s_per_gpu_what_if"] < changes["tokens_per_s_per_gpu"]
        price = changes["usd_per_million_output_tokens_what_if"]
        now = changes["usd_per_million_output_tokens"]
        # the price per token moves the other way from the tokens/s
        assert (price[faster] < now[faster]).all() and (price[slower] > now[slower]).all()
        assert (changes["tokens_change"] * changes["usd_per_million_change"] <= 0).all()
        assert changes["verdict_what_if"].str.startswith("multi-node serving").all()
        assert changes["layout_what_if"].str.contains("PP2").all()
    # the RoCE offer is ranked at its worse end, 50 Gb/s per GPU: plain Ethernet at 100 Gb/s per
    # node serves less; the unstated one at its worst, TCP at 32 Gb/s per node: Ethernet more
    assert (
        ethernet.loc["roce", "tokens_change"] < 0 < ethernet.loc["roce", "usd_per_million_change"]
    )
    assert (
        ethernet.loc["None", "tokens_change"] > 0 > ethernet.loc["None", "usd_per_million_change"]
    )
    tokens = ethernet["tokens_per_s_per_gpu_what_if"] / ethernet["tokens_per_s_per_gpu"] - 1
    assert ethernet["tokens_change"].tolist() == pytest.approx(tokens.tolist())


def test_experts_across_nodes_read_the_fabric_in_the_what_if():
    """DeepSeek-V3 served attention data-parallel with its experts over 16 GPUs (DEP16) sends
    every token's experts' traffic across two nodes: plain Ethernet costs it most of its
    throughput."""
    base = rank_offers(
        offers("infiniband"),
        serve("deepseek-v3-chat", (16,), attention_data_parallel=True, requests_per_s=None),
    )
    [row] = what_if_changes(base, base.what_if("ethernet")).to_dict("records")
    assert row["layout"].startswith("DEP16")
    assert row["tokens_change"] < -0.25 and row["usd_per_million_change"] > 0.25
    [same] = what_if_changes(base, base.what_if("infiniband")).to_dict("records")
    assert same["tokens_change"] == 0 and same["usd_per_million_change"] == 0  # its own 400


@pytest.mark.parametrize("fabric", sorted(WHAT_IF_GBPS_PER_NODE))
def test_a_single_node_serving_ranking_is_identical_for_every_fabric_class(fabric):
    """Llama 3 70B on one 8-GPU node, with prefill and decode apart on the same node or not:
    whatever fabric the offers are given, every ranked row reads the same."""
    for disaggregated in (False, True):
        base = rank_offers(
            offers("infiniband", "ethernet", None),
            serve("llama3-70b-chat", (8,), disaggregated=disaggregated),
        )
        other = base.what_if(fabric)
        changes = what_if_changes(base, other)
        assert len(changes) == 3 and changes["what_if_note"].isna().all()
        for name in ("tokens_per_s_per_gpu", "usd_per_million_output_tokens", "tpot_ms", "gpus"):
            assert (changes[f"{name}_what_if"] == changes[name]).all(), name
        assert (changes["tokens_change"] == 0).all()
        assert (changes["usd_per_million_change"] == 0).all()
        assert set(changes["verdict_what_if"]) == {ONE_NODE}
        columns = [c for c in base.columns if c not in ("fabric_estimated_as", "snapshot_id")]
        same = other.offers[columns].reset_index(drop=True)
        assert same.equals(base.offers[columns].reset_index(drop=True))


def test_the_serving_rule_says_what_does_not_change():
    rule = what_if_rule("ethernet", kind="serving")
    assert "100 Gb/s per node" in rule and "A replica inside one node does not change" in rule
    assert "One-node jobs" in what_if_rule("ethernet")  # the training rule as it was
    assert what_if_rule("ethernet", closing=False) == what_if_rule(
        "ethernet", closing=False, kind="serving"
    )
