"""Hybrid Mamba-Transformer stacks: Mamba-2 layers beside attention (Nemotron-H, Nemotron 3)."""

from __future__ import annotations

import pytest

from fabricscope.model.scaling import LayoutGrid, _model_flops_step, estimate
from fabricscope.model.workload import Mamba, Recompute, Workload
from fabricscope.model.workloads import WorkloadError, architectures, serving_architecture
from fabricscope.rank.catalog import profiles


def _nano(**mamba: int) -> Workload:
    """Nemotron 3 Nano as Megatron-Bridge's perf tables run it, its Mamba-2 layers changed
    (a changed variant has no pattern: the published one names Nano's own layers)."""
    fields = dict(architectures()["nemotron-3-nano"]["fields"])
    fields["mamba"] = {**fields["mamba"], **({"pattern": None} if mamba else {}), **mamba}
    return Workload(name="nano", tokens=1e12, global_batch_size=512, **fields)


def test_an_ssd_scan_counts_the_chunked_algorithms_matmuls():
    """arXiv:2405.21060 section 6: per token and head, the diagonal blocks' product with X
    (2QP), each chunk's state (2NP) and the output from the carried states (2NP); C B^T
    (2QN) once per group. At N = P = Q with a group per head that is 8 N^2: O(T N^2)."""
    n = 64
    square = Mamba(
        layers=1, attention_layers=0, state_size=n, heads=8, head_dim=n, groups=8, chunk_size=n
    )
    assert square.scan_flops_per_token == 8 * 8 * n * n
    # Nemotron 3 Nano's: 64 heads of 64, 8 groups of state 128, chunks of 128
    nano = _nano().mamba
    assert nano is not None
    assert nano.scan_flops_per_token == 64 * (2 * 128 * 64 + 4 * 128 * 64) + 8 * 2 * 128 * 128


def test_a_mamba_layer_is_its_projections_as_6n_and_its_scan_three_times():
    """One MLP layer and one Mamba-2 layer, no attention: a step's FLOPs per token are 6 x
    the parameters (embeddings, MLP, in_proj to z, x, B, C and dt, out_proj, the convolution
    and the per-head and norm vectors) plus the scan's forward and backward."""
    h, heads, p, n, g, k = 256, 8, 32, 16, 2, 4
    job = Workload(
        name="one", layers=1, hidden_size=h, heads=4, vocab_size=1000, seq_len=512,
        tokens=1e9, global_batch_size=4,
        mamba={"layers": 1, "attention_layers": 0, "state_size": n, "heads": heads,
               "head_dim": p, "groups": g, "conv_kernel": k, "chunk_size": 64},
    )  # fmt: skip
    inner = heads * p
    in_proj = h * (2 * inner + 2 * g * n + heads)
    mixer = in_proj + inner * h + (inner + 2 * g * n) * (k + 1) + 3 * heads + inner
    params = 2 * 1000 * h + 2 * h * 4 * h + mixer
    assert job.total_params == params
    scan = heads * (2 * 64 * p + 4 * n * p) + g * 2 * 64 * n
    assert job.attention_flops_per_token == 0.0
    assert _model_flops_step(job) == pytest.approx((6 * params + 3 * scan) * job.batch_tokens)


def test_a_hybrids_flops_fall_between_its_pure_attention_and_pure_mamba_variants():
    """Nano's 29 mixers as Megatron places them (23 Mamba-2, 6 attention), all attention,
    or all Mamba-2: at 8,192 tokens an attention layer costs more than a Mamba-2 layer."""
    hybrid = _nano()
    attention = _nano(layers=0, attention_layers=29)
    mamba = _nano(layers=29, attention_layers=0)
    flops = [_model_flops_step(job) for job in (mamba, hybrid, attention)]
    assert flops[0] < flops[1] < flops[2]
    assert attention.attention_flops_per_token == pytest.approx(
        29 / 6 * hybrid.attention_flops_per_token
    )
    hw = profiles([{"gpu_model": "H100-SXM-80GB", "gpu_count": 16, "gpus_per_node": 8,
                    "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400.0}])  # fmt: skip
    compute = [
        estimate(job, hw, LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)).row(0)["compute_s"]
        for job in (mamba, hybrid, attention)
    ]
    assert compute[0] < compute[1] < compute[2]


def test_a_mamba_layer_adds_tensor_parallel_collectives_as_attention_does():
    """Each sublayer, attention, Mamba-2 or MLP, is one collective each way under TP: Nano's
    52 layers are 52 / 46 of a transformer's with its 23 MLP layers' attention and MLP."""
    hybrid = _nano()
    hw = profiles([{"gpu_model": "H100-SXM-80GB", "gpu_count": 16, "gpus_per_node": 8,
                    "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400.0}])  # fmt: skip
    plain = hybrid.model_copy(update={"mamba": None})
    layout = LayoutGrid.partial(hybrid, 2, 1, 1, Recompute.NONE, 1)
    tp = [estimate(job, hw, layout).row(0)["tp_comm_s"] for job in (hybrid, plain)]
    assert tp[0] == pytest.approx(tp[1] * 52 / 46)


def test_nemotron_3_nano_is_stated_with_its_hybrid_pattern():
    shape = architectures()["nemotron-3-nano"]
    job = _nano()
    # MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME: 23 M, 6 *, 23 E
    assert (job.layers, job.attention_layers, job.mamba_layers) == (23, 6, 23)
    assert job.moe is not None and job.moe.moe_layer_fraction == 1.0
    assert job.total_params / 1e9 == pytest.approx(31.6, abs=0.1)
    assert job.active_params / 1e9 == pytest.approx(3.6, abs=0.1)
    assert "hybrid_layer_pattern" in shape["source"] and "mamba_mixer.py" in shape["source"]


def test_a_mamba_spec_refuses_groups_that_do_not_divide_its_heads():
    with pytest.raises(ValueError, match=r"must divide mamba\.heads"):
        Mamba(layers=1, attention_layers=1, state_size=16, heads=6, head_dim=8, groups=4)


def test_serving_refuses_a_hybrid_it_would_cost_as_attention_on_every_layer():
    with pytest.raises(WorkloadError, match="hybrid Mamba-Transformer"):
        serving_architecture("nemotron-3-nano", 4096, "test")


def _one_mamba_layer(**mamba: int) -> Workload:
    """One MLP layer and one Mamba-2 layer: a dense hybrid (no expert shuffles)."""
    return Workload(
        name="one", layers=1, hidden_size=1024, heads=8, vocab_size=1000, seq_len=4096,
        tokens=1e9, global_batch_size=8, micro_batch_size=1,
        mamba={"layers": 1, "attention_layers": 0, "state_size": 128, "heads": 32,
               "head_dim": 64, "groups": 8, "chunk_size": 128, **mamba},
    )  # fmt: skip


def test_a_mamba_mixers_memory_bound_work_is_compute_time_at_hbm_speed():
    """The convolution, the chunked scan's kernels, the copies and the norm move bytes, not
    FLOPs: halving the HBM efficiency adds exactly their time again; a transformer has none."""
    from fabricscope.model.scaling import ModelConstants, _grid, _mamba_bytes, _mamba_traffic

    hw = profiles(
        [{"gpu_model": "H100-SXM-80GB", "gpu_count": 8, "gpus_per_node": 8,
          "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400}]
    )  # fmt: skip
    job, c = _one_mamba_layer(), ModelConstants()
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    traffic = _mamba_traffic(job, _grid(job, hw, layout, c), c)[0, 0]
    assert traffic > 0.0
    slow = ModelConstants(hbm_efficiency=c.hbm_efficiency / 2)
    added = estimate(job, hw, layout, slow).compute_s[0] - estimate(job, hw, layout, c).compute_s[0]
    assert added == pytest.approx(traffic)
    # per token: the backward moves more than the forward; TP halves each GPU's share (its
    # heads and groups), a full recompute moves the forward's bytes once more
    forward, backward = _mamba_bytes(job.mamba, 1.0)  # type: ignore[arg-type]
    assert 0.0 < forward < backward
    half = _mamba_bytes(job.mamba, 2.0)  # type: ignore[arg-type]
    assert half[0] == pytest.approx(forward / 2) and half[1] == pytest.approx(backward / 2)
    full = LayoutGrid.partial(job, 1, 1, 1, Recompute.FULL, 1)
    again = _mamba_traffic(job, _grid(job, hw, full, c), c)[0, 0]
    assert again == pytest.approx(traffic * (2 * forward + backward) / (forward + backward))
    dense = job.model_copy(update={"mamba": None})
    assert _mamba_traffic(dense, _grid(dense, hw, layout, c), c)[0, 0] == 0.0
