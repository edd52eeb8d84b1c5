"""A MoE layer as it runs: its experts' GEMM width and its token shuffles (issue 37 item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from fabricscope.model.scaling import (
    ACTIVATION_BYTES,
    HYBRIDEP_GB200_GBPS,
    PERMUTED_BYTES,
    QUANTISED_BYTES,
    LayoutGrid,
    ModelConstants,
    _expert_activation,
    _expert_gemm_calls,
    _expert_rows,
    _fabric_copy_share,
    _gemm_width,
    _grid,
    _moe_permutation,
    _nvlink_alltoall_share,
    estimate,
)
from fabricscope.model.workload import Dispatcher, Precision, Recompute, Stack, Workload
from fabricscope.rank.catalog import profiles


def moe_job(**moe: object) -> Workload:
    """Four MoE layers, h = q = kv = 1024, 8 experts of 512 (gated), top-2, EP 4."""
    return Workload.model_validate(
        {
            "name": "moe known answer",
            "layers": 4,
            "hidden_size": 1024,
            "heads": 8,
            "ffn_size": 4096,
            "gated_mlp": True,
            "seq_len": 2048,
            "vocab_size": 32000,
            "global_batch_size": 8,
            "micro_batch_size": 1,
            "tokens": 1e9,
            "moe": {"experts": 8, "top_k": 2, "expert_ffn_size": 512, "expert_parallel": 4} | moe,
        }
    )


def eight_h100():
    return profiles(
        [
            {
                "gpu_model": "H100-SXM-80GB",
                "gpu_count": 8,
                "gpus_per_node": 8,
                "fabric_class": "infiniband",
                "fabric_gbps_per_gpu": 400,
            }
        ]
    )


def width(gemms: list[tuple[float, float, float]]) -> float:
    return sum(w * k * n / (k + n) for k, n, w in gemms) / sum(w for _, _, w in gemms)


def test_routed_experts_run_at_their_own_width_unsplit_by_tensor_parallelism():
    job = moe_job()
    h, e = 1024.0, 512.0
    for t in (1.0, 2.0):
        expected = width(
            [
                (h, 3 * h / t, 3 * h * h),  # QKV
                (h / t, h, h * h),  # output projection
                (h, 2 * e, 2 * h * 2 * e),  # two routed experts' gated up-projections
                (e, h, 2 * e * h),  # and their down-projections
            ]
        )
        assert _gemm_width(job, np.array([t]))[0] == pytest.approx(expected)
    # the dense MLP its ffn_size describes would read far wider than the 512-wide experts
    dense = job.model_copy(update={"moe": None})
    assert _gemm_width(job, np.array([1.0]))[0] < 0.8 * _gemm_width(dense, np.array([1.0]))[0]


def test_shared_experts_split_by_tensor_parallelism_and_dense_layers_keep_the_dense_mlp():
    job = moe_job(shared_experts=1, moe_layer_fraction=0.5)
    h, e, f, t = 1024.0, 512.0, 4096.0, 2.0
    expected = width(
        [
            (h, 3 * h / t, 3 * h * h),
            (h / t, h, h * h),
            (h, 2 * e, 2 * 0.5 * h * 2 * e),  # routed: top-2 on half the layers, unsplit
            (e, h, 2 * 0.5 * e * h),
            (h, 2 * e / t, 0.5 * h * 2 * e),  # shared: every token, at TP
            (e / t, h, 0.5 * e * h),
            (h, 2 * f / t, 0.5 * h * 2 * f),  # the other half: dense layers
            (f / t, h, 0.5 * f * h),
        ]
    )
    assert _gemm_width(job, np.array([t]))[0] == pytest.approx(expected)


@pytest.mark.parametrize(("expert_parallel", "rows"), [(4, 2048.0), (8, 4096.0), (2, 1024.0)])
def test_an_expert_sees_the_tokens_its_expert_parallel_group_routes_to_it(expert_parallel, rows):
    # 8 data-parallel ranks of one micro-batch of 2,048 tokens: each of the EP group's ranks
    # sends its 2,048 tokens to top-2 of the 8 experts, so an expert gets 2,048 x EP x 2 / 8
    job = moe_job(expert_parallel=expert_parallel)
    c = ModelConstants()
    g = _grid(job, eight_h100(), LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1), c)
    assert _expert_rows(job, g)[0, 0] == pytest.approx(rows)
    assert _expert_rows(job.model_copy(update={"moe": None}), g) == np.inf


def test_a_routed_expert_with_few_rows_is_narrower_and_slower_than_with_many():
    job = moe_job()
    h, e, rows = 1024.0, 512.0, 256.0
    # the routed experts' GEMMs move M K + K N + M N elements for M K N multiply-adds
    expected = sum(
        w / d
        for w, d in [
            (3 * h * h, 1 / h + 1 / (3 * h)),  # QKV: every token, rows unbounded
            (h * h, 1 / h + 1 / h),
            (2 * h * 2 * e, 1 / rows + 1 / h + 1 / (2 * e)),
            (2 * e * h, 1 / rows + 1 / e + 1 / h),
        ]
    ) / (3 * h * h + h * h + 2 * h * 2 * e + 2 * e * h)
    one = np.array([1.0])
    assert _gemm_width(job, one, rows)[0] == pytest.approx(expected)
    assert _gemm_width(job, one, rows)[0] < _gemm_width(job, one)[0]
    # fewer tokens per expert (a smaller expert-parallel group) computes slower, everything
    # else the same: EP 2 and EP 4 each leave more than one expert per rank (the same shuffles)
    hw = eight_h100()
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    narrow = estimate(moe_job(expert_parallel=2), hw, layout).compute_s[0]
    wide = estimate(moe_job(expert_parallel=4), hw, layout).compute_s[0]
    assert narrow > wide


@pytest.mark.parametrize(
    ("moe", "recompute", "passes"),
    [
        # two local experts per rank: permute (1 + 1/k), sort (2), unsort (2), unpermute
        # (1 + 1/k) = 7 forward, 7 backward
        ({}, Recompute.NONE, 14.0),
        # one expert per rank (EP 8): nothing to sort, 3 + 3
        ({"expert_parallel": 8}, Recompute.NONE, 6.0),
        # full recompute repeats the forward's shuffles: 3 x 2 + 3
        ({"expert_parallel": 8}, Recompute.FULL, 9.0),
    ],
)
def test_token_shuffles_move_top_k_copies_of_every_token_through_hbm(moe, recompute, passes):
    job = moe_job(**moe)
    hw = eight_h100()
    c = ModelConstants()
    layout = LayoutGrid.partial(job, 1, 1, 1, recompute, 1)
    g = _grid(job, hw, layout, c)
    # 8 sequences on 8 data-parallel ranks: one micro-batch of 2,048 tokens, 4 MoE layers
    elements = 4 * passes * 2048 * 2 * 1024
    expected = elements * PERMUTED_BYTES / (hw.hbm_bytes_per_s[0] * c.hbm_efficiency)
    assert _moe_permutation(job, g, c)[0, 0] == pytest.approx(expected)


def test_token_shuffles_are_part_of_the_compute_term_and_none_for_a_dense_model():
    job = moe_job()
    hw = eight_h100()
    c = ModelConstants()
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    dense = job.model_copy(update={"moe": None})
    assert np.all(_moe_permutation(dense, _grid(dense, hw, layout, c), c) == 0.0)
    g = _grid(job, hw, layout, c)
    shuffles = _moe_permutation(job, g, c)[0, 0]
    activation = _expert_activation(job, g, c)[0, 0]
    # memory-bound: the shuffles and the experts' activation take the same time again at half
    # the HBM efficiency
    slow = ModelConstants(hbm_efficiency=c.hbm_efficiency / 2)
    with_shuffles = estimate(job, hw, layout, c).compute_s[0]
    slower = estimate(job, hw, layout, slow).compute_s[0]
    assert slower - with_shuffles == pytest.approx(shuffles + activation)


@pytest.mark.parametrize(
    ("gated", "moe_act", "recompute", "elements"),
    [
        # SwiGLU: forward reads 2f and writes f; backward reads f and 2f, writes 2f
        (True, False, Recompute.NONE, (3 + 5) * 512),
        # full recompute runs the forward again
        (True, False, Recompute.FULL, (3 * 2 + 5) * 512),
        # squared ReLU (not gated): f and f forward, 3f backward
        (False, False, Recompute.NONE, (2 + 3) * 512),
        # Megatron-Core's selective recompute of moe_act runs the forward again
        (True, True, Recompute.NONE, (3 * 2 + 5) * 512),
    ],
)
def test_the_routed_experts_activation_moves_every_routed_copy_through_hbm(
    gated, moe_act, recompute, elements
):
    job = moe_job().model_copy(update={"gated_mlp": gated, "moe_act_recompute": moe_act})
    hw = eight_h100()
    c = ModelConstants()
    g = _grid(job, hw, LayoutGrid.partial(job, 1, 1, 1, recompute, 1), c)
    # one micro-batch of 2,048 tokens, top-2: 4,096 copies in each of the 4 MoE layers
    expected = (
        4 * 2048 * 2 * elements * ACTIVATION_BYTES / (hw.hbm_bytes_per_s[0] * c.hbm_efficiency)
    )
    assert _expert_activation(job, g, c)[0, 0] == pytest.approx(expected)
    # a dense model's activation is inside its fitted GEMM efficiency: none
    dense = job.model_copy(update={"moe": None})
    assert np.all(
        _expert_activation(
            dense, _grid(dense, hw, LayoutGrid.partial(dense, 1, 1, 1, recompute, 1), c), c
        )
        == 0.0
    )


@pytest.mark.parametrize(
    ("moe", "recompute", "expected_calls"),
    [
        # EP 4 of 8 experts: 2 local experts x 6 grouped GEMMs x 4 MoE layers, one micro-batch
        ({}, Recompute.NONE, 2 * 6 * 4),
        # EP 8: one local expert, half the calls
        ({"expert_parallel": 8}, Recompute.NONE, 1 * 6 * 4),
        # full recompute runs the two forward GEMMs again: 8 per expert and layer
        ({"expert_parallel": 8}, Recompute.FULL, 1 * 8 * 4),
    ],
)
def test_each_local_expert_pays_its_gemm_calls(moe, recompute, expected_calls):
    job = moe_job(**moe)
    hw = eight_h100()
    c = ModelConstants()
    g = _grid(job, hw, LayoutGrid.partial(job, 1, 1, 1, recompute, 1), c)
    assert _expert_gemm_calls(job, g, c)[0, 0] == pytest.approx(
        expected_calls * c.expert_gemm_call_s
    )


def test_expert_gemm_calls_are_compute_time_for_megatron_moe_only():
    job = moe_job()
    hw = eight_h100()
    c = ModelConstants()
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    free = ModelConstants(expert_gemm_call_s=0.0)
    added = estimate(job, hw, layout, c).compute_s[0] - estimate(job, hw, layout, free).compute_s[0]
    assert added == pytest.approx(2 * 6 * 4 * c.expert_gemm_call_s)
    # fewer experts per rank (a larger EP) pays fewer calls
    wide = moe_job(expert_parallel=8)
    fewer = (
        estimate(wide, hw, layout, c).compute_s[0] - estimate(wide, hw, layout, free).compute_s[0]
    )
    assert fewer == pytest.approx(added / 2)
    # a dense model has no experts; a PyTorch stack's grouped GEMM is one kernel
    for other in (
        job.model_copy(update={"moe": None}),
        job.model_copy(update={"stack": Stack.FSDP}),
    ):
        g = _grid(other, hw, layout, c)
        assert np.all(_expert_gemm_calls(other, g, c) == 0.0)


def test_transformer_engine_s_fused_grouped_mlp_pays_no_per_expert_calls():
    """The fused grouped MLP runs the local experts as one graph-safe kernel: the per-expert
    calls' time goes, nothing else moves; it is an MXFP8 path, refused at any other precision."""
    mx = {"precision": "fp8", "fp8_recipe": "mxfp8"}
    looped = Workload.model_validate(moe_job().model_dump() | mx)
    fields = looped.model_dump()
    fields["moe"] = fields["moe"] | {"fused_grouped_mlp": True}
    fused = Workload.model_validate(fields)
    hw = eight_h100()
    c = ModelConstants()
    layout = LayoutGrid.partial(looped, 1, 1, 1, Recompute.NONE, 1)
    assert np.all(_expert_gemm_calls(fused, _grid(fused, hw, layout, c), c) == 0.0)
    # the activation runs in the GEMMs' epilogues, which write their outputs quantised: only
    # the copy (w = 1,024) and the second GEMM's output gradient (w) are moved apart
    moved = _expert_activation(fused, _grid(fused, hw, layout, c), c)
    assert moved[0, 0] == pytest.approx(
        4
        * 2048
        * 2
        * (1024 + 1024)
        * QUANTISED_BYTES[Precision.FP8]
        / (hw.hbm_bytes_per_s[0] * c.hbm_efficiency)
    )
    assert moved[0, 0] < _expert_activation(looped, _grid(looped, hw, layout, c), c)[0, 0]
    assert (
        estimate(fused, hw, layout, c).step_time_s[0]
        < estimate(looped, hw, layout, c).step_time_s[0]
    )
    for precision in (
        {"precision": "bf16", "fp8_recipe": "tensorwise"},
        {"fp8_recipe": "tensorwise"},
    ):
        with pytest.raises(ValueError, match=r"moe\.fused_grouped_mlp needs MXFP8"):
            Workload.model_validate(fields | precision)


def test_the_nvlink_all_to_all_reaches_hybridep_s_measured_share_by_its_ranks():
    """HybridEP among 8-36 GB200 ranks (deepseek-ai/DeepEP hybrid-ep README): the table's
    rows exactly, between them on the ranks' logarithm, and its ends beyond it."""
    ranks = np.array(list(HYBRIDEP_GB200_GBPS), dtype=float)
    measured = np.array(list(HYBRIDEP_GB200_GBPS.values())) / 900.0
    assert np.allclose(_nvlink_alltoall_share(ranks), measured, rtol=1e-12)
    # 12 ranks lies halfway between 8 and 16 on log2 only at sqrt(128); at 12 it is nearer 16
    share = float(_nvlink_alltoall_share(np.array([12.0]))[0])
    assert measured[1] < share < measured[0]
    halfway = float(_nvlink_alltoall_share(np.array([np.sqrt(8.0 * 16.0)]))[0])
    assert halfway == pytest.approx((measured[0] + measured[1]) / 2.0, rel=1e-12)
    # not extrapolated: two ranks take 8's, EP 64 in an NVL72 domain 36's
    ends = _nvlink_alltoall_share(np.array([2.0, 64.0]))
    assert np.allclose(ends, [measured[0], measured[-1]], rtol=1e-12)
    # below the collectives' 0.80 everywhere
    assert float(np.max(measured)) < ModelConstants().nvlink_efficiency


@pytest.mark.parametrize(
    ("precision", "recompute", "quantised"),
    [
        # forward: the copy (w = h = 1,024) and the activation's output (f = 512); backward:
        # the second GEMM's output gradient (w) and the first's (2f, gated)
        ("fp8", Recompute.NONE, (1024 + 512) + 1024 + 2 * 512),
        ("nvfp4", Recompute.NONE, (1024 + 512) + 1024 + 2 * 512),
        # full recompute quantises the forward's inputs again
        ("fp8", Recompute.FULL, 2 * (1024 + 512) + 1024 + 2 * 512),
    ],
)
def test_a_low_precision_expert_quantises_its_grouped_gemms_inputs(precision, recompute, quantised):
    job = moe_job().model_copy(update={"precision": Precision(precision)})
    bf16 = moe_job()
    hw = eight_h100()
    c = ModelConstants()
    layout = LayoutGrid.partial(job, 1, 1, 1, recompute, 1)
    added = _expert_activation(job, _grid(job, hw, layout, c), c) - _expert_activation(
        bf16, _grid(bf16, hw, layout, c), c
    )
    expected = (
        4
        * 2048
        * 2
        * quantised
        * QUANTISED_BYTES[Precision(precision)]
        / (hw.hbm_bytes_per_s[0] * c.hbm_efficiency)
    )
    assert added[0, 0] == pytest.approx(expected)


def test_recomputing_moe_act_needs_a_moe_model():
    fields = moe_job().model_dump() | {"moe": None, "moe_act_recompute": True}
    with pytest.raises(ValueError, match="moe_act_recompute needs an MoE model"):
        Workload.model_validate(fields)


def test_deepep_and_hybridep_send_a_token_once_to_each_other_domain():
    """8 experts, top-2, EP 4 over two NVLink domains of 2 ranks (4 experts each): another
    domain holds none of a token's experts with probability C(4, 2) / C(8, 2) = 6/28, so
    22/28 copies cross the fabric where NCCL's all-to-all sends k (d - 1) / d = 1."""
    ep, local = np.array([[4.0]]), np.array([[2.0]])
    nccl = moe_job().moe
    assert nccl is not None and nccl.dispatcher is Dispatcher.ALLTOALL
    assert _fabric_copy_share(nccl, ep, local)[0, 0] == 1.0
    for dispatcher in (Dispatcher.DEEPEP, Dispatcher.HYBRIDEP):
        flex = nccl.model_copy(update={"dispatcher": dispatcher})
        assert _fabric_copy_share(flex, ep, local)[0, 0] == pytest.approx(22 / 28)
        # one domain: nothing crosses the fabric to deduplicate
        assert _fabric_copy_share(flex, ep, ep)[0, 0] == 1.0


def test_a_flex_dispatcher_spends_less_time_on_the_fabric_not_on_nvlink():
    hw = profiles(
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
    c = ModelConstants()

    def step(ep: int, dispatcher: str) -> tuple[float, float]:
        job = moe_job(experts=16, expert_parallel=ep, dispatcher=dispatcher).model_copy(
            update={"global_batch_size": 16}
        )
        r = estimate(job, hw, LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1), c)
        return float(r.ep_comm_s[0]), float(r.compute_s[0])

    # EP 8 in one node: the same either way
    assert step(8, "deepep") == step(8, "alltoall")
    # EP 16 over two nodes: fewer copies on the fabric, the compute unchanged
    (deepep, compute), (nccl, same) = step(16, "deepep"), step(16, "alltoall")
    assert deepep < nccl and compute == same
