"""Unbalanced MoE routing (issue 37 item 3): the most-loaded expert-parallel rank sets the step."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from fabricscope.model.error_bands import routing_notes
from fabricscope.model.scaling import (
    LayoutGrid,
    ModelConstants,
    _ep_comm,
    _expert_parallel,
    _grid,
    _routed_flops_step,
    estimate,
)
from fabricscope.model.workload import Recompute
from fabricscope.model.workloads import WorkloadError, load_workload
from tests.model.test_scaling_moe import eight_h100, moe_job


def test_balanced_routing_is_the_default_and_costs_nothing_more():
    hw, c = eight_h100(), ModelConstants()
    job = moe_job()
    assert job.moe is not None and job.moe.load_imbalance == 1.0
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    stated = moe_job(load_imbalance=1.0)
    assert (
        estimate(job, hw, layout, c).step_time_s[0]
        == estimate(stated, hw, layout, c).step_time_s[0]
    )


def test_the_most_loaded_rank_runs_its_routed_gemms_that_much_longer():
    hw, c = eight_h100(), ModelConstants()
    even = moe_job()
    # the routed experts' FLOPs: 4 MoE layers x top-2 x 3 x 1024 x 512 weights, 6 per weight
    # and token, over the step's 8 x 2048 tokens
    assert _routed_flops_step(even) == pytest.approx(6.0 * 4 * 2 * 3 * 1024 * 512 * 8 * 2048)

    def added(imbalance: float, recompute: Recompute) -> float:
        layout = LayoutGrid.partial(even, 1, 1, 1, recompute, 1)
        skewed = moe_job(load_imbalance=imbalance)
        return (
            estimate(skewed, hw, layout, c).compute_s[0]
            - estimate(even, hw, layout, c).compute_s[0]
        )

    # the extra compute grows with what the slowest rank receives over the mean, and a full
    # recompute runs the routed GEMMs' forward again (8 of 6)
    assert added(1.5, Recompute.NONE) > 0.0
    assert added(2.0, Recompute.NONE) == pytest.approx(2.0 * added(1.5, Recompute.NONE))
    assert added(1.5, Recompute.FULL) == pytest.approx(4.0 / 3.0 * added(1.5, Recompute.NONE))
    # twice the load on one rank costs the routed GEMMs once more: less than the whole step
    layout = LayoutGrid.partial(even, 1, 1, 1, Recompute.NONE, 1)
    assert added(2.0, Recompute.NONE) < estimate(even, hw, layout, c).compute_s[0]
    # and the all-to-all carries that rank's volume: 1.5 times the mean rank's bytes
    g = _grid(even, hw, layout, c)
    skewed = moe_job(load_imbalance=1.5)
    ep = _expert_parallel(even, g)
    no_compute = g.col["peak_bf16"] * 0.0
    base_ep = _ep_comm(even, g, c, ep, no_compute)[0][0, 0]
    skew_ep = _ep_comm(skewed, _grid(skewed, hw, layout, c), c, ep, no_compute)[0][0, 0]
    assert base_ep < skew_ep < 1.5 * base_ep  # the per-call latencies do not grow


def test_a_dense_model_has_no_routed_flops_and_imbalance_below_one_is_refused():
    assert _routed_flops_step(moe_job().model_copy(update={"moe": None})) == 0.0
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        moe_job(load_imbalance=0.8)


def test_a_workload_file_states_it_over_an_architecture_s_experts(tmp_path: Path):
    path = tmp_path / "skewed.json"
    plan = {"tokens": 1e12, "global_batch_tokens": 16_777_216}
    path.write_text(
        json.dumps({"architecture": "deepseek-v3", **plan, "moe": {"load_imbalance": 1.3}})
    )
    job = load_workload(str(path))
    # the architecture's experts kept, the file's imbalance on top
    assert job.moe is not None and (job.moe.experts, job.moe.top_k) == (256, 8)
    assert job.moe.load_imbalance == 1.3
    path.write_text(
        json.dumps({"architecture": "deepseek-v3", **plan, "moe": {"load_imbalance": 0}})
    )
    with pytest.raises(WorkloadError, match=r"moe\.load_imbalance"):
        load_workload(str(path))


def test_the_notes_say_how_a_moe_jobs_routing_is_costed():
    (balanced,) = routing_notes(moe_job())
    assert balanced.startswith("MoE routing costed as balanced") and "load_imbalance" in balanced
    (skewed,) = routing_notes(moe_job(load_imbalance=1.25))
    assert skewed.startswith("MoE routing imbalance 1.25:")
    assert routing_notes(moe_job().model_copy(update={"moe": None})) == []
