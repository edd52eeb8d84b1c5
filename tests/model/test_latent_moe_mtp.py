"""LatentMoE (routed experts on a latent) and multi-token prediction (Nemotron 3 Super,
DeepSeek-V3)."""

from __future__ import annotations

import pytest

from fabricscope.model.scaling import (
    LayoutGrid,
    ModelConstants,
    _grid,
    _high_precision_flops_step,
    _model_flops_step,
    _moe_permutation,
    estimate,
)
from fabricscope.model.workload import Recompute, Workload
from fabricscope.model.workloads import architectures, preset
from fabricscope.rank.catalog import profiles

HW = [{"gpu_model": "H100-SXM-80GB", "gpu_count": 64, "gpus_per_node": 8,
       "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400.0}]  # fmt: skip


def _super(**fields: object) -> Workload:
    """Nemotron 3 Super as Megatron-Bridge's performance tables run it."""
    shape = {**architectures()["nemotron-3-super"]["fields"], **fields}
    return Workload(name="super", tokens=1e12, global_batch_size=512, **shape)


def _small(**fields: object) -> Workload:
    base: dict[str, object] = dict(
        name="small", layers=4, hidden_size=512, heads=8, vocab_size=1000, seq_len=1024,
        tokens=1e9, global_batch_size=64,
    )  # fmt: skip
    return Workload(**{**base, **fields})


def test_nemotron_3_super_has_the_parameters_nvidia_states():
    """'120 billion (active 12 billion)' (Nemotron 3 Super technical report): the main model
    derives to 120.6B and 12.7B (untied embeddings counted); the MTP block adds 2.9B: an
    attention layer, a LatentMoE layer and the 2h x h projection."""
    job = _super()
    h, latent, ffn = 4096, 1024, 2688
    assert (job.layers, job.attention_layers, job.mamba_layers) == (40, 8, 40)
    main = job.total_params - job.mtp_params
    assert main == pytest.approx(120e9, rel=0.01)
    assert 12e9 <= job.active_params < 13e9
    attention = 2 * h * 4096 + 2 * h * 2 * 128
    moe = 512 * 2 * latent * ffn + 2 * 2 * h * ffn + 2 * h * latent
    assert job.mtp_params == attention + moe + 2 * h * h  # one block: the depths share it
    assert _super(mtp_shared_layer=False).mtp_params == 2 * job.mtp_params
    # the routed experts, the MTP block's among them, are what expert parallelism splits
    assert job.expert_params == 41 * 512 * 2 * latent * ffn


def test_nemotron_3_ultra_has_the_parameters_nvidia_states():
    """'550 billion total and 55 billion active' (Nemotron 3 Ultra technical report,
    arXiv:2606.15007): the Hugging Face config (NVIDIA's aiconfigurator copy) derives to 549.1B
    and 55.9B in the main model; its MTP block, shared by the 2 depths NVIDIA's runs train,
    adds an attention layer, a LatentMoE layer and the 2h x h projection."""
    shape = architectures()["nemotron-3-ultra"]["fields"]
    job = Workload(name="ultra", tokens=1e12, global_batch_size=256, **shape)
    h, latent, ffn = 8192, 2048, 5120
    assert (job.layers, job.attention_layers, job.mamba_layers) == (48, 12, 48)
    assert job.mamba is not None and job.mamba.pattern is not None
    assert len(job.mamba.pattern) == 108 and job.mamba.pattern.index("*") == 7
    main = job.total_params - job.mtp_params
    assert main == pytest.approx(550e9, rel=0.01)
    assert 55e9 <= job.active_params < 57e9
    attention = 2 * h * 64 * 128 + 2 * h * 2 * 128
    moe = 512 * 2 * latent * ffn + 2 * 2 * h * ffn + 2 * h * latent
    assert job.mtp_params == attention + moe + 2 * h * h
    assert job.expert_params == 49 * 512 * 2 * latent * ffn


def test_a_latent_moe_layer_costs_what_megatron_bridge_counts():
    """Megatron-Bridge's flop_utils.py moe_layer_flops (@067f987df03b), forward per token:
    routed 4 latent f k, 'Up proj and down proj' 4 h latent, shared 4 h f_shared; three times
    that forward and backward: 6 x the layer's active parameters."""
    job = _super(mtp_layers=0, mtp_shared_layer=False)
    plain = _super(mtp_layers=0, mtp_shared_layer=False, moe={
        **architectures()["nemotron-3-super"]["fields"]["moe"], "latent_size": None})  # fmt: skip
    h, latent, ffn, shared, k = 4096, 1024, 2688, 5376, 22
    bridge = 3 * (4 * latent * ffn * k + 4 * h * latent + 4 * h * shared)
    per_token = (_model_flops_step(job) - _model_flops_step(plain)) / job.batch_tokens
    bridge_plain = 3 * (4 * h * ffn * k + 4 * h * shared)
    assert per_token == pytest.approx(40 * (bridge - bridge_plain))


def test_a_latent_moe_shuffles_and_dispatches_its_latent():
    """The down-projection runs before the dispatch: the token shuffles move latent-wide
    copies (1024 of 4096 elements), a quarter of the hidden size's."""
    job = _super(mtp_layers=0, mtp_shared_layer=False)
    moe = architectures()["nemotron-3-super"]["fields"]["moe"]
    plain = _super(mtp_layers=0, mtp_shared_layer=False, moe={**moe, "latent_size": None})
    hw = profiles(HW)
    c = ModelConstants()
    grids = [
        _grid(w, hw, LayoutGrid.partial(w, 1, 1, 1, Recompute.NONE, 1), c) for w in (job, plain)
    ]
    shuffles = [_moe_permutation(w, g, c) for w, g in zip((job, plain), grids, strict=True)]
    assert float(shuffles[0].ravel()[0]) == pytest.approx(float(shuffles[1].ravel()[0]) / 4)
    layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE, 1)
    ep = [estimate(w, hw, layout).row(0)["ep_comm_s"] for w in (job, plain)]
    assert ep[0] < ep[1] / 2


def test_each_mtp_depth_runs_its_block_and_the_output_layer():
    """DeepSeek-V3 section 2.2: a depth is a transformer block behind the 2h x h projection,
    with the shared output head; a dense model's block is an attention layer and its MLP.
    Forward and backward, 6 FLOPs per weight and token, and one more attention layer."""
    h, v = 512, 1000
    one, two = _small(mtp_layers=1), _small(mtp_layers=2)
    block = 4 * h * h + 2 * h * 4 * h + 2 * h * h
    assert one.mtp_params == block and two.mtp_params == 2 * block
    assert one.mtp_flops_per_token == 6 * (block + h * v)
    assert two.mtp_flops_per_token == 2 * one.mtp_flops_per_token
    plain = _small()
    assert one.active_params == plain.active_params == plain.total_params
    assert one.attention_flops_per_token == pytest.approx(plain.attention_flops_per_token * 5 / 4)
    extra = _model_flops_step(one) - _model_flops_step(plain)
    attention = (one.attention_flops_per_token - plain.attention_flops_per_token) * 64 * 1024
    assert extra == pytest.approx(6 * (block + h * v) * 64 * 1024 + attention)
    # its output head runs at BF16 with the main model's
    high = _high_precision_flops_step(one) - _high_precision_flops_step(plain)
    assert high == pytest.approx(attention + 6 * h * v * 64 * 1024)


def test_mtp_adds_its_collectives_memory_and_time_and_nothing_without_it():
    hw = profiles(HW)
    plain, mtp = _small(), _small(mtp_layers=2)
    layout = LayoutGrid.partial(plain, 2, 1, 1, Recompute.NONE, 1)
    rows = [estimate(w, hw, layout).row(0) for w in (plain, mtp)]
    # two sublayers per depth beside the 4 layers' 8
    assert rows[1]["tp_comm_s"] == pytest.approx(rows[0]["tp_comm_s"] * 12 / 8)
    assert rows[1]["memory_gb_per_gpu"] > rows[0]["memory_gb_per_gpu"]
    assert rows[1]["step_time_s"] > rows[0]["step_time_s"]
    # DeepSeek-V3's preset: its stated parameters hold with a depth of MTP, its FLOPs grow
    deepseek = preset("deepseek-v3")
    with_mtp = deepseek.model_copy(update={"mtp_layers": 1})
    assert with_mtp.total_params == deepseek.total_params == 671e9
    assert with_mtp.active_params == deepseek.active_params
    assert with_mtp.moe_layer_passes == deepseek.moe_layer_passes + 1 == 59
    assert _model_flops_step(with_mtp) > _model_flops_step(deepseek)


def test_mtp_fields_are_validated():
    with pytest.raises(ValueError, match="mtp_shared_layer needs mtp_layers"):
        _small(mtp_shared_layer=True)
    with pytest.raises(ValueError, match="LoRA with multi-token prediction"):
        _small(mtp_layers=1, lora={"rank": 8})
    with pytest.raises(ValueError):
        _small(moe={"experts": 8, "top_k": 2, "latent_size": 0})
