"""The ranking view and its URL form: round trips, defaults, and what a bad link says."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from fabricscope.app.view_state import (
    DEFAULT_GPUS,
    DEFAULT_PRESET,
    MAX_STARS,
    InputError,
    RankView,
    WorkloadFields,
    from_query_params,
    request_of,
    starred_after,
    to_query_params,
    workload_of,
)
from fabricscope.model.workloads import preset, presets
from fabricscope.rank.costs import CostInputs


def as_url(params: Mapping[str, str | list[str]]) -> dict[str, list[str]]:
    return {k: v if isinstance(v, list) else [v] for k, v in params.items()}


def test_the_default_view_is_an_empty_url():
    assert to_query_params(RankView()) == {}
    assert from_query_params({}) == (RankView(), [])


def test_every_field_survives_the_url():
    view = RankView(
        preset="mixtral-8x7b",
        custom=WorkloadFields(40.0, 24, 4096, 32, 4096, 500.0, 1024, "fp8", "eager"),
        gpus="64-512",
        tiers=("on_demand", "spot"),
        objective="blend",
        time_weight=0.25,
        gpu_models=("H100-SXM-80GB",),
        regions=("us-east-1", "eu, west"),
        max_budget_usd=1.5e6,
        deadline_days=30.0,
        min_fabric="roce",
        multi_node=True,
        what_if="infiniband",
        starred=("lambda/8x H100, SXM/-/on_demand", "aws/p5.48xlarge/us-east-1/spot"),
    )
    params = to_query_params(view)
    assert params["star"] == list(view.starred) and params["tier"] == ["on_demand", "spot"]
    assert from_query_params(as_url(params)) == (view, [])


def test_a_bad_link_keeps_the_rest_and_says_what_it_dropped():
    view, problems = from_query_params(
        {
            "preset": ["gpt5"],
            "tier": ["on_demand", "weekly"],
            "tw": ["2"],
            "budget": ["-5"],
            "gpus": ["128"],
            "custom": ["1"],
            "w_layers": ["many"],
            "w_stack": ["jax"],
        }
    )
    assert view == RankView(gpus="128")
    assert len(problems) == 5
    assert "preset='gpt5' is not a preset" in problems[0]
    assert any("weekly" in p for p in problems) and any("w_layers" in p for p in problems)
    view, problems = from_query_params({"custom": ["1"], "w_stack": ["jax"]})
    assert view == RankView()
    assert any("stack 'jax' is not one of megatron, fsdp, eager" in p for p in problems)


def test_the_whole_costs_inputs_survive_the_url_and_make_the_requests_costs():
    costs = {
        "dataset_tb": 40.0,
        "checkpoints_kept": 3,
        "egress_tb": 1.5,
        "storage_usd_per_tb_month": 20.0,
        "egress_usd_per_gb": 0.087,
        "support_pct": 10.0,
        "include_stated_support": True,
    }
    view = RankView(**costs)
    params = to_query_params(view)
    assert params == {
        "data_tb": "40",
        "ckpts": "3",
        "egress_tb": "1.5",
        "storage_price": "20",
        "egress_price": "0.087",
        "support_pct": "10",
        "stated_support": "1",
    }
    assert from_query_params(as_url(params)) == (view, [])
    assert request_of(view).costs == CostInputs(**costs)
    # a zero is a value, not the default: no checkpoints kept, downloads free
    free = RankView(checkpoints_kept=0, egress_usd_per_gb=0.0)
    assert to_query_params(free) == {"ckpts": "0", "egress_price": "0"}
    assert from_query_params(as_url(to_query_params(free))) == (free, [])
    # a price the short form would round keeps every digit
    exact = RankView(storage_usd_per_tb_month=23.456789)
    assert from_query_params(as_url(to_query_params(exact))) == (exact, [])


def test_the_default_view_asks_for_the_default_costs():
    """The refresh stores the default view's ranking under its request's JSON: the costs it
    asks for are CostInputs' defaults, and the URL says nothing of them."""
    assert request_of(RankView()).costs == CostInputs()
    assert to_query_params(RankView(checkpoints_kept=2, include_stated_support=False)) == {}


def test_a_link_with_bad_cost_inputs_says_which():
    view, problems = from_query_params(
        {
            "data_tb": ["lots"],
            "ckpts": ["2.5"],
            "egress_tb": ["inf"],
            "storage_price": ["-20"],
            "egress_price": ["5000"],
            "support_pct": ["150"],
            "gpus": ["64"],
        }
    )
    assert view == RankView(gpus="64")
    assert problems == [
        "data_tb='lots' is not a number",
        "ckpts='2.5' is not a whole number",
        "egress_tb='inf' is not a finite number",
        "storage_price='-20': Input should be greater than or equal to 0",
        "egress_price='5000': Input should be less than or equal to 1000",
        "support_pct='150': Input should be less than or equal to 100",
    ]
    with pytest.raises(InputError, match="support_pct: Input should be less than or equal to 100"):
        request_of(RankView(support_pct=150.0))


def test_custom_fields_change_the_workload_and_are_validated():
    base = preset("llama3-70b")
    fields = WorkloadFields.of(base)
    same = workload_of(RankView(preset="llama3-70b", custom=fields))
    assert same.layers == base.layers and same.batch_tokens == base.batch_tokens
    assert same.total_params == pytest.approx(base.total_params, rel=1e-3)
    bigger = RankView(preset="llama3-70b", custom=WorkloadFields(**{**vars(fields), "layers": 96}))
    assert workload_of(bigger).layers == 96
    broken = WorkloadFields(**{**vars(fields), "heads": 60})
    with pytest.raises(InputError, match="not a multiple of heads 60"):
        workload_of(RankView(preset="llama3-70b", custom=broken))


def test_request_errors_name_the_input():
    with pytest.raises(InputError, match="GPU count 'x'"):
        request_of(RankView(gpus="x"))
    with pytest.raises(InputError, match="at least one pricing tier"):
        request_of(RankView(tiers=()))
    with pytest.raises(InputError, match="unknown GPU 'Z9000'"):
        request_of(RankView(gpu_models=("Z9000",)))
    request = request_of(RankView(deadline_days=2.0, max_budget_usd=1000.0))
    assert request.deadline_hours == 48.0 and request.max_budget_usd == 1000.0


def test_the_default_view_is_a_preset_and_a_count_only_changes_enter_the_url():
    assert (RankView().preset, RankView().gpus) == (DEFAULT_PRESET, DEFAULT_GPUS)
    assert DEFAULT_PRESET in presets()
    # the former default is now a change, and says so in the URL
    view = RankView(preset="llama3-8b", gpus="64")
    assert to_query_params(view) == {"preset": "llama3-8b", "gpus": "64"}
    assert from_query_params(as_url(to_query_params(view))) == (view, [])
    assert to_query_params(RankView(gpus=DEFAULT_GPUS, preset=DEFAULT_PRESET)) == {}


def test_stars_follow_the_grid_and_keep_those_it_does_not_show():
    shown = ["a", "b", "c", "d"]
    # "z" is starred but not in this ranking: it stays; "b" unticked goes; "d" ticked joins
    stars, left_out = starred_after(("z", "b", "a"), shown, ["d", "a"])
    assert (stars, left_out) == (("z", "a", "d"), 0)
    many = [f"o{i}" for i in range(MAX_STARS + 7)]
    stars, left_out = starred_after(("o5",), many, many)
    assert stars[0] == "o5" and len(stars) == MAX_STARS and left_out == 7


def test_a_link_with_more_stars_than_a_shortlist_holds_keeps_the_first():
    keys = [f"p/o{i}/-/on_demand" for i in range(MAX_STARS + 226)]
    view, problems = from_query_params({"star": keys})
    assert view.starred == tuple(keys[:MAX_STARS])
    assert problems == [
        f"star: {len(keys)} offers starred, a shortlist holds at most {MAX_STARS}; the first "
        f"{MAX_STARS} are kept"
    ]


def test_the_serve_form_offers_only_architectures_the_serving_model_costs():
    from fabricscope.app.view_state import serving_choices
    from fabricscope.model.workloads import architectures

    offered = serving_choices()["architecture"]
    hybrids = {name for name, entry in architectures().items() if entry["fields"].get("mamba")}
    # nemotron-3-nano is a hybrid Mamba-Transformer: the serving model refuses it
    assert "nemotron-3-nano" in hybrids and not hybrids & set(offered)
    assert {"llama3-70b", "deepseek-v3", "gpt-oss-120b"} <= set(offered)


def test_the_fp8_recipe_is_a_workload_field_and_needs_fp8():
    fields = WorkloadFields.of(preset("llama3-8b"))
    assert fields.fp8_recipe == "tensorwise"  # the default: nothing moves
    rowwise = RankView(
        preset="llama3-8b",
        custom=WorkloadFields(**{**vars(fields), "precision": "fp8", "fp8_recipe": "rowwise"}),
    )
    assert from_query_params(as_url(to_query_params(rowwise))) == (rowwise, [])
    assert workload_of(rowwise).fp8_recipe.value == "rowwise"
    bf16 = RankView(custom=WorkloadFields(**{**vars(fields), "fp8_recipe": "rowwise"}))
    with pytest.raises(InputError, match="needs precision fp8"):
        workload_of(bf16)
    _, problems = from_query_params({"custom": ["1"], "w_fp8_recipe": ["nvfp4"]})
    assert any("fp8_recipe 'nvfp4' is not one of" in p for p in problems)
