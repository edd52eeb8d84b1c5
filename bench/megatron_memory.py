"""The memory model against Megatron-LM's theoretical memory formula, on dense and MoE presets.

The reference transcribes NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py
@d98e8a64ddf34856e74b24714e3bedb2f5a39553 (compute_weight_and_optimizer_memory with the
distributed optimizer, and compute_activation_memory: sequence parallelism with selective
recompute) for standard attention without multi-token prediction; its terms are named as
there. ``make bench`` prints the table; docs/MODEL.md's known limits quote its range (a test
keeps them equal). Issue 15 asks for the model within 10% of it.
"""

from __future__ import annotations

import math

from fabricscope.model.hardware import GIB
from fabricscope.model.scaling import LayoutGrid, ModelConstants, estimate
from fabricscope.model.workload import Recompute, Workload
from fabricscope.model.workloads import preset
from fabricscope.rank.catalog import profiles


def megatron_bytes(
    w: Workload, tp: int, pp: int, dp: int, ep: int, micro_batch: int, microbatches: int
) -> float:
    """Weights and optimizer of the most loaded shard, plus the first stage's activations."""
    h, layers, heads = w.hidden_size, w.layers, w.heads
    groups = w.kv_heads or heads
    padded_vocab = math.ceil(w.vocab_size / (128 * tp)) * 128 * tp  # make_vocab_size_divisible_by
    glu = 3 / 2 if w.gated_mlp else 1
    self_attn_term = 2 * h * h * (1 + groups / heads)
    dense_mlp_params = 2 * h * w.ffn * glu
    if w.moe is None:
        num_moe_layers, routed_expert_params, shared_expert_params = 0, 0.0, 0.0
    else:
        num_moe_layers = round(layers * w.moe.moe_layer_fraction)
        ffn_e = w.moe.expert_ffn_size or w.ffn
        routed_expert_params = 2 * h * ffn_e * w.moe.experts * glu
        shared_expert_params = 2 * h * ffn_e * w.moe.shared_experts * glu
    num_dense_layers = layers - num_moe_layers
    embedding_size = h * padded_vocab
    tp_sharded = (self_attn_term + dense_mlp_params) * num_dense_layers + (
        self_attn_term + shared_expert_params
    ) * num_moe_layers
    expert_sharded = routed_expert_params * num_moe_layers
    tp_on_shard = (tp_sharded / pp + embedding_size) / tp
    if not w.tied_embeddings and pp == 1:
        tp_on_shard += embedding_size / tp
    expert_on_shard = expert_sharded / pp / ep
    expert_data_parallel = tp * pp * dp // (ep * pp)  # world / (etp x ep x pp), etp = 1

    def bytes_per_parameter(data_parallel: int) -> float:
        return 6 + 12 / data_parallel  # the distributed optimizer (ZeRO-1)

    weights_and_optimizer = tp_on_shard * bytes_per_parameter(dp) + (
        expert_on_shard * bytes_per_parameter(expert_data_parallel)
    )
    s, b = w.seq_len, micro_batch
    activations = s * b * h * (18 + 4 * (w.ffn / h)) * layers
    activations += 8 * s * b * pp + s * b * h * pp  # embedding input and its dropout
    if pp > 1:
        activations *= min(1, microbatches / pp)
    else:
        activations += s * b * h * 4 * (1 + padded_vocab / h)  # output layer and the loss
    return weights_and_optimizer + activations / tp


# (preset, GPUs, tp, pp, ep): each a layout Megatron-LM's recipes run at that scale
CASES = [
    ("llama3-8b", 64, 1, 1, 1),
    ("llama3-8b", 64, 2, 2, 1),
    ("llama3-70b", 512, 8, 4, 1),
    ("llama3-405b", 2048, 8, 16, 1),
    ("gpt3-175b", 1024, 8, 8, 1),
    ("mixtral-8x7b", 64, 2, 1, 8),
    ("mixtral-8x7b", 256, 1, 4, 8),
]


def ratios() -> list[tuple[str, int, int, int, int, float, float]]:
    """Per case: preset, GPUs, tp, pp, ep, ours and Megatron's GiB per GPU (buffers apart)."""
    rows = []
    for name, gpus, tp, pp, ep in CASES:
        base = preset(name)
        fields = base.model_dump()
        if base.moe is not None:
            fields["moe"] = {**fields["moe"], "expert_parallel": ep}
        w = Workload(**fields)
        hw = profiles(
            [
                {
                    "gpu_model": "H100-SXM-80GB",
                    "gpu_count": gpus,
                    "gpus_per_node": 8,
                    "fabric_class": "infiniband",
                    "fabric_gbps_per_gpu": 400,
                }
            ]
        )
        c = ModelConstants()
        layout = LayoutGrid.partial(w, tp, pp, 1, Recompute.SELECTIVE, 1)
        ours = float(estimate(w, hw, layout, c).memory_gb_per_gpu[0]) * GIB - c.buffer_bytes
        dp = gpus // (tp * pp)
        reference = megatron_bytes(w, tp, pp, dp, ep, 1, w.batch_sequences // dp)
        rows.append((name, gpus, tp, pp, ep, ours / GIB, reference / GIB))
    return rows


def table() -> list[str]:
    lines = [
        "### Memory per GPU against Megatron-LM's theoretical memory formula (H100, selective "
        "recompute, micro-batch 1, buffers apart)",
        "",
        "| preset | GPUs | tp | pp | ep | fabricscope GiB | Megatron GiB | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, gpus, tp, pp, ep, ours, reference in ratios():
        lines.append(
            f"| {name} | {gpus} | {tp} | {pp} | {ep} | {ours:.1f} | {reference:.1f} | "
            f"{ours / reference:.2f} |"
        )
    return lines
