"""The data-parallel gradient reduction: when Megatron-Core runs it (the last micro-batch's
backward) and over which group the routed experts' gradients go (their own copies)."""

from __future__ import annotations

import numpy as np
import pytest

from fabricscope.model.scaling import (
    LayoutGrid,
    ModelConstants,
    _dp_comm,
    _expert_group,
    _grid,
    _parameters,
    _ring_allreduce,
    _ring_gather,
)
from fabricscope.model.workload import Recompute
from fabricscope.rank.catalog import profiles
from tests.model.test_scaling_moe import moe_job


def sixteen_h100():
    """Two 8-GPU nodes on 400 Gb/s InfiniBand per GPU."""
    return profiles(
        [
            {
                "gpu_model": "H100-SXM-80GB",
                "gpu_count": 16,
                "gpus_per_node": 8,
                "fabric_class": "infiniband",
                "fabric_gbps_per_gpu": 400,
            }
        ]
    )


def dense_job(global_batch: int):
    return moe_job().model_copy(update={"moe": None, "global_batch_size": global_batch})


@pytest.mark.parametrize(
    ("global_batch", "pp", "virtual", "window_share"),
    [
        # one micro-batch per data-parallel rank: the whole backward hides the reduction
        (16, 1, 1, 1.0),
        # four: only the last one's backward does (the others run under no_sync)
        (64, 1, 1, 1.0 / 4.0),
        # two stages, eight micro-batches, one chunk each: the last micro-batch's backward
        (64, 2, 1, 1.0 / 8.0),
        # interleaved (two chunks a stage): each chunk reduces after its last micro-batch,
        # in the last group of p = 2 micro-batches
        (64, 2, 2, 2.0 / 8.0),
    ],
)
def test_the_reduction_hides_under_the_last_micro_batches_backward_only(
    global_batch, pp, virtual, window_share
):
    job = dense_job(global_batch)
    c = ModelConstants()
    layout = LayoutGrid.partial(job, 1, pp, 1, Recompute.NONE, virtual)
    g = _grid(job, sixteen_h100(), layout, c)
    assert float(g.m[0, 0]) * float(g.dp[0, 0]) == global_batch
    params = _parameters(job, g)
    no_compute = np.zeros_like(g.t * g.col["gpu_count"])
    dp_time = _dp_comm(job, g, c, params, no_compute)[0]
    # a compute whose window (the backward, 2/3 of it, at dp_overlap) hides half the
    # reduction: the other half is exposed
    compute = 0.5 * dp_time / (c.dp_overlap * 2.0 / 3.0 * window_share)
    exposed = _dp_comm(job, g, c, params, compute)[1]
    assert exposed[0, 0] == pytest.approx(0.5 * float(dp_time[0, 0]))
    # the whole step's backward would have hidden all of it where the window is a share
    if window_share < 1.0:
        assert float(dp_time[0, 0]) < float(c.dp_overlap * compute[0, 0] * 2.0 / 3.0)


@pytest.mark.parametrize(("expert_parallel", "copies", "per_node"), [(8, 2, 1), (4, 4, 2)])
def test_an_expert_s_gradients_reduce_over_its_copies_on_their_own_nics(
    expert_parallel, copies, per_node
):
    job = moe_job(expert_parallel=expert_parallel, experts=16)
    c = ModelConstants()
    hw = sixteen_h100()
    g = _grid(job, hw, LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1), c)
    params = _parameters(job, g)
    assert float(params.edp[0, 0]) == copies
    # the copies sit expert_parallel ranks apart: one per node at EP 8, two at EP 4, and
    # each node's copies share its NICs
    bus = per_node * g.fabric_bus(np.full_like(g.t, 2.0))
    ranks, group_bus, latency = _expert_group(g, c, params)
    assert ranks[0, 0] == copies and group_bus[0, 0] == pytest.approx(float(bus[0, 0]))
    assert latency[0, 0] == g.net_step[0, 0]
    expected = _ring_allreduce(
        params.experts * 2.0, params.edp, bus, g.net_step, c.collective_base_latency_s
    )
    # the whole reduction is the dense part over all 16 ranks and the experts over theirs
    dense = _ring_allreduce(
        (params.here - params.experts) * 2.0,
        g.dp,
        np.minimum(g.nvlink_bus, 8.0 * g.fabric_bus(np.full_like(g.t, 2.0))),
        g.net_step,
        c.collective_base_latency_s,
    )
    dp_time, _ = _dp_comm(job, g, c, params, np.zeros_like(g.t * g.col["gpu_count"]))
    assert dp_time[0, 0] == pytest.approx(float((dense + expected)[0, 0]))


def test_experts_on_one_node_reduce_over_nvlink():
    job = moe_job(expert_parallel=2)
    c = ModelConstants()
    g = _grid(job, sixteen_h100(), LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1), c)
    params = _parameters(job, g)
    # 16 ranks, EP 2: eight copies of each expert, four to a node, over two nodes
    assert float(params.edp[0, 0]) == 8.0
    one_node = moe_job(expert_parallel=2)
    g8 = _grid(
        one_node,
        profiles([{"gpu_model": "H100-SXM-80GB", "gpu_count": 8, "gpus_per_node": 8}]),
        LayoutGrid.partial(one_node, 1, 1, 1, Recompute.NONE, 1),
        c,
    )
    params8 = _parameters(one_node, g8)
    ranks, bus, latency = _expert_group(g8, c, params8)
    assert ranks[0, 0] == 4.0 and bus[0, 0] == g8.nvlink_bus[0, 0]
    assert latency[0, 0] == c.nvlink_step_latency_s


def test_fsdp_gathers_the_experts_over_their_copies_and_a_single_copy_not_at_all():
    c = ModelConstants()
    hw = sixteen_h100()

    def dp_time(expert_parallel: int) -> float:
        job = moe_job(expert_parallel=expert_parallel, experts=16).model_copy(
            update={"zero_stage": 3}
        )
        g = _grid(job, hw, LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1), c)
        params = _parameters(job, g)
        base = c.collective_base_latency_s
        dense = params.here - params.experts
        dp_bus = np.minimum(g.nvlink_bus, 8.0 * g.fabric_bus(np.full_like(g.t, 2.0)))
        dense_gather = _ring_gather(dense * 2.0, g.dp, dp_bus, g.net_step, base)
        ranks, bus, latency = _expert_group(g, c, params)
        experts = np.where(
            ranks > 1, _ring_gather(params.experts * 2.0, ranks, bus, latency, base), 0.0
        )
        # every micro-batch gathers twice (forward, backward); the step reduce-scatters once
        layers = 2.0 * g.m * job.layers * g.net_step
        expected = 2.0 * g.m * (dense_gather + experts) + dense_gather + experts + layers
        time = _dp_comm(job, g, c, params, np.zeros_like(g.t * g.col["gpu_count"]))[0]
        assert time[0, 0] == pytest.approx(float(expected[0, 0]))
        return float(time[0, 0])

    # EP 16 over 16 GPUs: one copy of each expert, nothing of theirs to gather or reduce;
    # EP 8: two copies a node apart, over each GPU's own link
    assert dp_time(16) < dp_time(8)
