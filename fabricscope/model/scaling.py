"""The scaling model: step time, time-to-train and where the time goes, for arrays of hardware.

Every equation is in docs/MODEL.md with its source; constants are in ``ModelConstants``.
Shapes: hardware profiles along axis 0 (P), candidate layouts along axis 1 (K). The cost
of an estimate grows with P x K, never with the number of offers: offers join the
result by profile index. Pure numpy, no I/O.

Units: seconds, bytes, FLOP, bytes/s per GPU unidirectional.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fabricscope.model.hardware import (
    GIB,
    REFERENCE_GEMM_CEILING,
    Array,
    HardwareProfiles,
    fabric_efficiency,
)
from fabricscope.model.workload import (
    Dispatcher,
    Fp8Recipe,
    Mamba,
    MoE,
    Precision,
    Recompute,
    Stack,
    Workload,
)

RECOMPUTE_MODES = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
# A100 SXM: 312 TFLOP/s BF16 over 2.039 TB/s of HBM (gpus.csv): the width constant's reference
REFERENCE_RIDGE = 312e12 / 2.039e12


H100_MAMF_BF16, H100_MAMF_FP8 = 794.5, 1402.6  # TFLOP/s, gemm_ceilings.csv
# torchtitan's FP8 gain over BF16 (Float8 linears, torchao tensorwise scaling), both compiled,
# Llama 3.1 8B FSDP on the same H100 system the same day: 8,532 / 6,667 tokens/s per GPU on 8
# GPUs, 8,380 / 6,514 on 128 (benchmarks/llama3_h100_202412_torchtitan.md Tables 1 and 3;
# fixtures/published_runs/torchtitan_benchmarks.csv). The system's peak cancels in the ratio
TORCHTITAN_FP8_GAIN = (8532 / 6667 + 8380 / 6514) / 2
# the FP8 factor at which the model's FP8 gain on that job (the linear layers FP8, attention and
# the embeddings BF16: 31.4% of its FLOPs) is the gain measured: (1 - 0.314) / (H100_MAMF_FP8 /
# H100_MAMF_BF16 x (1 / TORCHTITAN_FP8_GAIN - 0.314)); tests hold it to that. A PyTorch stack's
# FP8 factor, and the prior a fit without FP8 rows keeps (fit_constants in
# fabricscope/accuracy/validation.py)
TORCHTITAN_FP8_FACTOR = 0.8351
FP8_EFFICIENCY_PRIOR = TORCHTITAN_FP8_FACTOR
# torchao's end-to-end float8 benchmarks (torchtitan Llama3-8B, 8 GPUs, batch 1, 8,192 tokens,
# torch.compile, FSDP2, per-op SAC; median tokens/s; pytorch/ao
# docs/source/workflows/training.md @36027d82d1ad): on H100 tensorwise (float8 all-gather)
# 7,689.5, rowwise 6,768 (BF16 6,150); on B200 tensorwise 10,417, rowwise 8,640.5 (BF16
# 8,307.5). A recipe's factor (:func:`_fp8_recipe_factor`) is the linear layers' FP8 rate over
# tensorwise's at which the model's compute on that job (tensorwise at TORCHTITAN_FP8_FACTOR,
# 31.4% of its FLOPs in BF16) falls from tensorwise's by the ratio torchao measured: with R the
# model's tensorwise linear rate over BF16's (the GPU's FP8 over BF16 matmul ceilings x
# TORCHTITAN_FP8_FACTOR: 1.474 on H100, 1.643 on B200) and r tensorwise's throughput over the
# recipe's, factor = ((1 - 0.314) / R) / (r (0.314 + (1 - 0.314) / R) - 0.314); tests hold the
# model to the measured ratios
TORCHAO_H100 = {"bf16": 6150.0, "tensorwise": 7689.5, "rowwise": 6768.0}
TORCHAO_B200 = {"bf16": 8307.5, "tensorwise": 10417.0, "rowwise": 8640.5}
# Transformer Engine's GEMM profiling guide (NVIDIA/TransformerEngine
# docs/examples/gemm_profiling/gemm_profiling.rst @1609c890e, PR #2863, 2026-06-01): a 5B
# model's 24 layers (hidden 4,096, MLP 16,384, 15,872 tokens), all 12 GEMMs of each layer
# (forward, data and weight gradients) in autocast mode, quantisation included, on an NVIDIA
# B300 SXM6 AC, ms per step. NVFP4's linear-layer rate over per-tensor FP8's (the recipe the
# FP8 factors stand for) is their ratio: 219.522 / 154.869 = 1.417
TE_GEMM_B300_MS = {
    "bf16": 306.192,
    "fp8_current": 219.522,
    "fp8_delayed": 187.246,
    "mxfp8": 215.608,
    "nvfp4": 154.869,
}
# Transformer Engine's blockwise FP8 (Float8BlockScaling) in the same guide, autocast, ms per
# step of the same 5B model: on an H200 NVL FP8 current scaling 486.851, blockwise 549.171
# (@1609c890e); on the B300 the merged guide prints no blockwise column, its review version did
# (@332941783386, PR #2863 before merge): MXFP8 204.166, blockwise 230.363. A blockwise job's
# linear-layer rate over per-tensor FP8's (MXFP8 on Blackwell runs at it) is their ratio
TE_GEMM_H200_MS = {"bf16": 768.335, "fp8_current": 486.851, "fp8_blockwise": 549.171}
TE_GEMM_B300_REVIEW_MS = {"bf16": 293.454, "mxfp8": 204.166, "fp8_blockwise": 230.363}
# An independent NeMo run of NVFP4 on Blackwell (vuiseng9/nemo-perf-nvfp4 README.md
# @13bdb298cad3, 2025-10-24: Transformer Engine 2.8 in NeMo 25.09 with NVFP4 patched in, NeMo's
# own performance script): Llama3-8B pre-training on one 8-GPU B200 node, global batch 128 of
# 8,192 tokens, micro-batch 2, TP 1, PP 1, tokens/s per GPU over 25 steps. Blackwell's NVFP4
# gain is the linear layers' rate over FP8's at which the model's step on that job falls from
# FP8's (delayed scaling, "--fp8_recipe ds") by the measured 35,578 / 29,567 = 1.203; tests hold
# the model to it
NEMO_NVFP4_B200 = {"bf16": 21618.0, "fp8_delayed": 29567.0, "mxfp8": 28432.0, "nvfp4": 35578.0}
# the precisions whose linear layers run below BF16 (FP8's factors, NVFP4's gain on top)
LOW_PRECISIONS = (Precision.FP8, Precision.NVFP4)
# Blackwell Ultra's FP4 tensor cores run at 3x its FP8 peak (B300, GB300); Blackwell's at 2x
ULTRA_FP4_RATIO = 2.5


# What a constant is: fitted globally on the published runs, measured or taken from a source,
# a prior where none was found, or policy (a threshold that says, not estimates)
CONSTANT_KINDS = ("fitted", "measured", "prior", "policy")


def _constant(value: float, kind: str, source: str) -> Any:
    """A ModelConstants field: its default, its kind (CONSTANT_KINDS) and its source."""
    assert kind in CONSTANT_KINDS, kind
    return field(default=value, metadata={"kind": kind, "source": source})


@dataclass(frozen=True)
class ModelConstants:
    """Default constants, each with its kind and source (``constant_kinds``; docs/MODEL.md):
    ``fitted`` globally on the published runs (``accuracy.validation.fit_constants`` fits
    exactly these), ``measured`` or taken from a source, a ``prior`` (no measurement found),
    or verdict ``policy``."""

    # compute efficiency: eta = eta_max * w / (w + w_half * ridge) * ceiling / A100's, w the
    # layer's GEMM width on one TP rank, ceiling the GPU's measured matmul share of its peak;
    # eta_max and w_half fitted globally on the published runs (fabricscope/accuracy/validation.py,
    # docs/MODEL.md)
    eta_compute_max: float = _constant(
        0.6530, "fitted", "fit_constants on the published runs (docs/MODEL.md)"
    )
    matrix_width_half: float = _constant(
        190.358, "fitted", "fit_constants on the published runs (docs/MODEL.md)"
    )
    # FP8 (the linear layers only): achieved throughput on FP8 peak relative to BF16's on BF16
    # peak, beyond what the GPU's measured FP8 and BF16 matmul ceilings explain; fitted with
    # the two above on NeMo 24.07's H100 FP8 rows (prior FP8_EFFICIENCY_PRIOR)
    fp8_efficiency_factor: float = _constant(
        0.9565, "fitted", "fit_constants on NeMo 24.07's H100 FP8 rows"
    )
    # software stack (Workload.stack), compute efficiency over the fitted one (megatron's):
    # fsdp: none measured (llm-foundry's 78 fitted FSDP rows come out -0.8% signed median,
    # Megatron's families +6%: no penalty to fit); eager: torchtitan's FSDP without
    # torch.compile over with it, Llama 3.1 8B on H100, the same team and day (5,762 / 6,667
    # tokens/s on 8 GPUs, 5,605 / 6,514 on 128; benchmarks/llama3_h100_202412_torchtitan.md)
    fsdp_efficiency_factor: float = _constant(
        1.0, "prior", "none measured: llm-foundry's FSDP rows show no penalty to fit"
    )
    eager_efficiency_factor: float = _constant(
        0.862, "measured", "torchtitan Llama 3.1 8B on H100, without over with torch.compile"
    )
    # FP8 on a PyTorch stack (fsdp, eager) in place of fp8_efficiency_factor (Megatron's,
    # fitted): measured on torchtitan (TORCHTITAN_FP8_FACTOR)
    fsdp_fp8_efficiency_factor: float = _constant(
        TORCHTITAN_FP8_FACTOR, "measured", "torchtitan FP8 over BF16 (TORCHTITAN_FP8_FACTOR)"
    )
    # rowwise FP8 (Workload.fp8_recipe): the linear layers' FP8 rate over the per-tensor recipes'
    # (the factors above were measured and fitted on those), per GPU generation, from torchao's
    # measured ratios (TORCHAO_H100, TORCHAO_B200; :func:`_fp8_recipe_factor`); Hopper's is
    # every FP8 GPU's but Blackwell's
    rowwise_fp8_factor_hopper: float = _constant(
        0.8142, "measured", "torchao H100 rowwise over tensorwise, 6,768 / 7,689.5 (TORCHAO_H100)"
    )
    rowwise_fp8_factor_blackwell: float = _constant(
        0.7351, "measured", "torchao B200 rowwise over tensorwise, 8,640.5 / 10,417 (TORCHAO_B200)"
    )
    # blockwise FP8 (Workload.fp8_recipe): the linear layers' rate over the per-tensor
    # recipes', per GPU generation, Transformer Engine's measured GEMM times with quantisation
    # (TE_GEMM_H200_MS, TE_GEMM_B300_REVIEW_MS; :func:`_fp8_recipe_factor`); Hopper's is every
    # FP8 GPU's but Blackwell's
    blockwise_fp8_factor_hopper: float = _constant(
        0.8865,
        "measured",
        "Transformer Engine's H200 GEMM profile, FP8 current over blockwise, 486.851 / 549.171 "
        "ms (TE_GEMM_H200_MS)",
    )
    blockwise_fp8_factor_blackwell: float = _constant(
        0.8863,
        "measured",
        "Transformer Engine's B300 GEMM profile (review version), MXFP8 over blockwise, "
        "204.166 / 230.363 ms (TE_GEMM_B300_REVIEW_MS)",
    )
    # NVFP4 (Precision.NVFP4): the linear layers' rate over per-tensor FP8's, from Transformer
    # Engine's measured GEMM times with quantisation (TE_GEMM_B300_MS; :func:`_nvfp4_gain`)
    nvfp4_gain_blackwell_ultra: float = _constant(
        1.4175,
        "measured",
        "Transformer Engine's B300 GEMM profile, FP8 current over NVFP4, 219.522 / 154.869 ms "
        "(TE_GEMM_B300_MS)",
    )
    nvfp4_gain_blackwell: float = _constant(
        1.4573,
        "measured",
        "an independent NeMo run on 8 B200: the model's Llama3-8B step at NVFP4 over FP8's is "
        "the measured 35,578 / 29,567 tokens/s (NEMO_NVFP4_B200)",
    )
    # fused attention on 64-wide heads over 128-wide ones on GPUs with FP8 tensor cores
    # (:func:`_head_width_rate`): the scores' matmul runs over the head width and the product
    # with V is as wide, so a narrow head's tiles do half the work per byte loaded. Measured
    # under a causal mask at 4k tokens in the FlashAttention README's own benchmark
    # (Dao-AILab/flash-attention @7ef24848, assets/flash3_fp16_fwd.png, panels b and d):
    # cuDNN's forward on an H100 SXM5, 0.69 to 0.72 from 512 to 16k tokens
    narrow_head_attention_rate: float = _constant(
        363.0 / 518.0,
        "measured",
        "cuDNN attention forward, causal, 4k tokens, H100 SXM5: 363 TFLOP/s at head dim 64 "
        "over 518 at 128 (FlashAttention README, assets/flash3_fp16_fwd.png)",
    )
    # achieved share of HBM bandwidth in streaming kernels (prior: STREAM-like copies reach
    # 80-90% of the datasheet figure); used for unfused attention's score traffic and MoE's
    # token shuffles (_moe_permutation)
    hbm_efficiency: float = _constant(
        0.8, "prior", "STREAM-like copies reach 80-90% of the datasheet bandwidth"
    )
    # one local expert's GEMM call in Megatron-Core's grouped MLP (Transformer Engine's
    # multi-stream cuBLAS loop, one GEMM per local expert): 8 experts of 128 tokens (N = K =
    # 2,048, NVFP4 on SM100, kernels only) take 0.267 ms, 33.4 us each, of which the eight
    # GEMMs' FLOPs are about 1 us (NVIDIA/TransformerEngine PR #3134's table); _expert_gemm_calls
    expert_gemm_call_s: float = _constant(
        33.4e-6,
        "measured",
        "TE multi-stream grouped GEMM, 8 experts x 128 tokens in 0.267 ms on SM100 "
        "(NVIDIA/TransformerEngine PR #3134)",
    )
    # share of TP communication hidden behind GEMMs when the job overlaps them
    # (Megatron-Core --tp-comm-overlap); prior, fitted on the runs that state it
    tp_overlap_share: float = _constant(
        0.8, "prior", "Megatron-Core --tp-comm-overlap; no measured share"
    )
    # share of MoE all-to-all hidden under another micro-batch's compute when the job overlaps
    # them (Megatron-Core --overlap-moe-expert-parallel-comm, DualPipe); prior, as TP's
    ep_overlap_share: float = _constant(0.8, "prior", "as TP's overlap share")
    # NVLink bus bandwidth efficiency: 741 of 900 GB/s on HGX H100 (model-notes 5.5, [R5])
    nvlink_efficiency: float = _constant(
        0.80, "measured", "741 of 900 GB/s on HGX H100 (model-notes 5.5, [R5])"
    )
    # NCCL ring step latency, Simple protocol (model-notes 5.3, [R19])
    nvlink_step_latency_s: float = _constant(
        3.4e-6, "measured", "NCCL ring step latency, Simple protocol (model-notes 5.3, [R19])"
    )
    network_step_latency_s: float = _constant(
        9.6e-6, "measured", "NCCL ring step latency, Simple protocol (model-notes 5.3, [R19])"
    )
    collective_base_latency_s: float = _constant(
        8.4e-6, "measured", "NCCL base latency (model-notes 5.3, [R19])"
    )
    # all-to-all reaches this share of the fabric's all-reduce efficiency (prior, 4.4)
    alltoall_efficiency: float = _constant(0.8, "prior", "model-notes 4.4")
    # DP gradient sync hidden under backward (prior 0.8-0.9, model-notes 4.6)
    dp_overlap: float = _constant(
        0.864, "fitted", "fit_constants on the published runs; prior 0.8-0.9 (model-notes 4.6)"
    )
    # SM time lost to overlapped collectives: NVLink 0.15, NIC 0.02 (Calculon [R2])
    overlap_sm_contention: float = _constant(
        0.02, "measured", "Calculon's NIC processor usage [R2]"
    )
    # optimizer step: bytes touched per trainable parameter shard (mixed-precision Adam)
    optimizer_bytes_per_param: float = _constant(
        16.0, "measured", "mixed-precision Adam's state per parameter"
    )
    # memory: buffers and CUDA context (prior), headroom for fragmentation (prior, 4.8)
    buffer_bytes: float = _constant(2.5e9, "prior", "buffers and CUDA context")
    memory_headroom: float = _constant(0.08, "prior", "fragmentation (model-notes 4.8)")
    # failures: GPU-hours per unexpected interruption, from Llama 3's 419 in 54 days on
    # 16,384 H100 (model-notes 4.9, [R32]); checkpoint write and restart cost (priors)
    gpu_hours_per_interruption: float = _constant(
        50_700.0, "measured", "Llama 3: 419 interruptions in 54 days on 16,384 H100 ([R32])"
    )
    checkpoint_s: float = _constant(60.0, "prior", "checkpoint write")
    restart_s: float = _constant(600.0, "prior", "restart after an interruption")
    # verdict thresholds on the exposed communication share (model-notes 4.6)
    balanced_from: float = _constant(
        0.10, "policy", "verdict threshold on the exposed communication share (model-notes 4.6)"
    )
    communication_bound_from: float = _constant(
        0.30, "policy", "verdict threshold on the exposed communication share (model-notes 4.6)"
    )


def constant_kinds() -> dict[str, tuple[str, str]]:
    """Every ModelConstants field: (its kind, its source)."""
    return {f.name: (f.metadata["kind"], f.metadata["source"]) for f in fields(ModelConstants)}


def fitted_constants() -> list[str]:
    """The constants fitted globally on the published runs, in declaration order."""
    return [name for name, (kind, _) in constant_kinds().items() if kind == "fitted"]


VIRTUAL_STAGES = (1, 2, 4, 8)
# shares of each stage's layers a searched full recompute may cover (Megatron's block method
# recomputes the first N layers of each stage and keeps the rest's activations)
BLOCK_SHARES = (0.25, 0.5, 0.75, 1.0)


# pipeline depths a search tries besides the divisors of the layer count: every depth to 16 and
# a few deeper ones, their stages uneven as Megatron-Core places them (:func:`stage_plan`)
SEARCHED_DEPTHS = (*range(1, 17), 20, 24, 28, 32, 48, 64)
# an uneven split whose heaviest stage is this much over the mean is never worth searching
MAX_STAGE_IMBALANCE = 1.25


def stage_plan(
    layers: int, pp: int, first: int | None = None, last: int | None = None
) -> tuple[int, int, int]:
    """The layers of the first, each middle and the last pipeline stage, as Megatron-Core
    places them: even stages when ``pp`` divides the layers, otherwise the first and last
    stage take what is left once the middle stages hold equal counts
    (``--decoder-first-pipeline-num-layers`` / ``--decoder-last-pipeline-num-layers``, which
    need the middle ``pp - 2`` stages to divide the rest). Unless given, the split that keeps
    the heaviest stage lightest, the end stages no heavier than the middle ones (they also
    hold the embedding and the loss): Llama 3 405B's 126 layers on 16 stages are 7, 14 x 8, 7.
    Raises ValueError for a split that does not add up."""
    if pp < 1 or pp > layers:
        raise ValueError(f"pp={pp} needs between 1 and {layers} stages ({layers} layers)")
    if pp == 1:
        if first not in (None, layers) or last not in (None, layers):
            raise ValueError(f"one stage holds all {layers} layers")
        return layers, layers, layers
    if first is None and last is None and layers % pp == 0:
        even = layers // pp
        return even, even, even
    middle_stages = pp - 2
    if first is not None or last is not None:
        f = first if first is not None else 0
        lst = last if last is not None else 0
        if first is None or last is None:  # one end given: the other takes what is even
            rest = layers - f - lst
            if middle_stages == 0:
                f, lst = (f, rest) if first is not None else (rest, lst)
            else:
                k = -(-rest // (middle_stages + 1))
                other = rest - middle_stages * k
                f, lst = (f, other) if first is not None else (other, lst)
        rest = layers - f - lst
        if f < 1 or lst < 1 or rest < middle_stages or (middle_stages and rest % middle_stages):
            raise ValueError(
                f"first={f}, last={lst} on pp={pp}: the {middle_stages} middle stages must "
                f"hold the other {rest} of {layers} layers in equal counts of at least one"
            )
        if middle_stages == 0 and rest:
            raise ValueError(f"first={f} + last={lst} must be the {layers} layers on pp=2")
        return f, (rest // middle_stages if middle_stages else max(f, lst)), lst
    if middle_stages == 0:
        return -(-layers // 2), -(-layers // 2), layers // 2
    best: tuple[int, int, int] | None = None
    for k in range(1, (layers - 2) // middle_stages + 1):
        rest = layers - middle_stages * k
        f, lst = -(-rest // 2), rest // 2
        # ties go to the larger middle count: the end stages also hold the embedding, loss
        if lst < 1 or (best is not None and max(k, f) > max(best)):
            continue
        best = (f, k, lst)
    assert best is not None
    return best


def stage_label(pp: int, first: int, middle: int, last: int) -> str:
    """``7+8x14+7`` for uneven stages; empty when every stage holds the same count."""
    if pp == 1 or first == middle == last:
        return ""
    if pp == 2:
        return f"{first}+{last}"
    return f"{first}+{middle}x{pp - 2}+{last}"


def stage_imbalance(layers: int, heaviest: Array | float, pp: Array | float) -> Array:
    """The heaviest stage's load over the mean one's: its layers over ``(layers + 2) / pp``,
    the embedding and the loss counted as a layer each (Megatron-Core's
    ``--account-for-embedding-in-pipeline-split`` and ``--account-for-loss-in-pipeline-split``),
    never below 1. Even stages, and Llama 3 405B's 7 + 14 x 8 + 7, are 1. Scalars or arrays."""
    return np.maximum(1.0, np.asarray(heaviest) * pp / (layers + 2))


def _virtual_choices(layers: int, pp: int, given: bool) -> list[int]:
    """Interleaved schedule: v model chunks per stage, at least one layer each.

    Megatron's ``--num-layers-per-virtual-pipeline-stage`` may be 1. A searched layout splits
    the layers evenly (``p·v`` divides them), as Megatron's interleaved schedule requires by
    default, so a searched uneven split runs one chunk per stage (which keeps the search
    small). A given layout's stages need not hold equal layer counts: a published run that
    chose its ``p`` has placed its layers somehow (Llama 3 405B's 126 layers on 16 stages,
    fewer on the first and last: 4 chunks of about 2 layers per stage).
    """
    return [
        v
        for v in VIRTUAL_STAGES
        if v == 1 or (pp > 1 and layers >= pp * v and (given or layers % (pp * v) == 0))
    ]


@dataclass(frozen=True)
class LayoutGrid:
    """Candidate layouts (axis 1): tensor, pipeline, virtual stages, micro-batch, recompute.

    A ``given`` layout is used even if the memory model says it does not fit (the
    estimate then reports ``fits_memory`` False); what was not given is still searched.
    """

    tp: Array
    pp: Array
    virtual: Array
    micro_batch: Array
    recompute: NDArray[np.int64]  # index into RECOMPUTE_MODES
    given: bool = False
    # full recompute of this share of each stage's layers (Megatron's --recompute-method
    # block); 1 is every layer (uniform), 0 for none and selective
    recompute_share: Array | None = None
    # context parallelism: the sequence split over this many ranks (1 = none); only a
    # given layout sets it, a searched one keeps 1
    cp: Array | None = None
    # the first and last pipeline stages' layer counts where a layout gives them (NaN: as
    # :func:`stage_plan` places them)
    first_stage: Array | None = None
    last_stage: Array | None = None

    def __post_init__(self) -> None:
        if self.recompute_share is None:
            share = np.where(self.recompute == RECOMPUTE_MODES.index(Recompute.FULL), 1.0, 0.0)
            object.__setattr__(self, "recompute_share", share)
        if self.cp is None:
            object.__setattr__(self, "cp", np.ones_like(self.tp))
        for name in ("first_stage", "last_stage"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, np.full_like(self.tp, np.nan))

    @classmethod
    def search(cls, workload: Workload, max_tp: int) -> LayoutGrid:
        """Every layout worth trying: TP within one NVLink domain; PP dividing the layers, or
        uneven as Megatron-Core places them (:func:`stage_plan`) at the usual depths, unless
        the heaviest stage is over ``MAX_STAGE_IMBALANCE`` of the mean."""
        layers = workload.layers
        tps = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= max_tp and workload.heads % t == 0]
        even = {p for p in range(1, min(layers, 128) + 1) if layers % p == 0}
        uneven = {
            p
            for p in SEARCHED_DEPTHS
            if p <= layers
            and stage_imbalance(layers, max(stage_plan(layers, p)), p) <= MAX_STAGE_IMBALANCE
        }
        return cls._grid(workload, tps, sorted(even | uneven), given=False)

    @classmethod
    def partial(
        cls,
        workload: Workload,
        tp: int,
        pp: int,
        micro_batch: int | None = None,
        recompute: Recompute | None = None,
        virtual: int | None = None,
        cp: int = 1,
        first_stage: int | None = None,
        last_stage: int | None = None,
        block_share: float | None = None,
    ) -> LayoutGrid:
        """A given TP x PP (x CP) layout; micro-batch, recompute and schedule searched if not
        given. Uneven stages take the first and last stage's layers if given (else
        :func:`stage_plan` places them); a split that does not add up raises ValueError.
        ``block_share``: full recompute of that share of each stage's layers (block-25%...)."""
        stage_plan(workload.layers, pp, first_stage, last_stage)
        if block_share is not None:
            recompute = Recompute.FULL
        grid = cls._grid(workload, [tp], [pp], True, micro_batch, recompute, virtual, cp)
        k = len(grid.tp)
        return replace(
            grid,
            first_stage=np.full(k, np.nan if first_stage is None else float(first_stage)),
            last_stage=np.full(k, np.nan if last_stage is None else float(last_stage)),
            recompute_share=grid.recompute_share
            if block_share is None
            else np.full(k, block_share),
        )

    @classmethod
    def _grid(
        cls,
        workload: Workload,
        tps: list[int],
        pps: list[int],
        given: bool,
        micro_batch: int | None = None,
        recompute: Recompute | None = None,
        virtual: int | None = None,
        cp: int = 1,
    ) -> LayoutGrid:
        fixed_mb = micro_batch or workload.micro_batch_size
        mbs = [fixed_mb] if fixed_mb else [1, 2, 4, 8]
        mode = recompute or workload.activation_recompute
        full = RECOMPUTE_MODES.index(Recompute.FULL)
        if mode:  # stated: that mode, and "full" means every layer
            modes = [(RECOMPUTE_MODES.index(mode), 1.0 if mode is Recompute.FULL else 0.0)]
        else:  # searched: none, selective, and full recompute of a share of the layers
            modes = [(0, 0.0), (1, 0.0), *((full, share) for share in BLOCK_SHARES)]
        rows = [
            (t, p, v, b, r, share)
            for t in tps
            for p in pps
            for v in ([virtual] if virtual else _virtual_choices(workload.layers, p, given))
            for b in mbs
            for r, share in modes
        ]
        grid = np.array(rows, dtype=np.float64)
        return cls(
            grid[:, 0],
            grid[:, 1],
            grid[:, 2],
            grid[:, 3],
            grid[:, 4].astype(np.int64),
            given,
            grid[:, 5],
            np.full(len(grid), float(cp)),
        )


@dataclass(frozen=True)
class StepPart:
    """One part of a training step's time: its ``Estimate`` field (seconds per step), its short
    label (charts) and its heading (exports)."""

    field: str
    label: str
    heading: str


# Where a training step's time goes, in the order people read it: the parts sum to the step
# time (``Estimate.step_time_s``; tests/model/test_step_parts.py). Failures and restarts
# come on top of it (``FAILURE_PART``, per step). Declared once: the ranking's columns, the
# stored estimates, the app's chart and the exports read it.
STEP_PARTS: tuple[StepPart, ...] = (
    StepPart("compute_s", "compute", "Compute per step (s)"),
    StepPart("overlap_contention_s", "compute slowed by overlapped comm",
             "Compute slowed by overlapped communication per step (s)"),
    StepPart("tp_comm_s", "tensor-parallel comm", "Tensor-parallel communication per step (s)"),
    StepPart("pp_comm_s", "pipeline-parallel comm", "Pipeline-parallel communication per step (s)"),
    StepPart("cp_comm_s", "context-parallel comm (exposed)",
             "Exposed context-parallel communication per step (s)"),
    StepPart("dp_comm_exposed_s", "data-parallel comm (exposed)",
             "Exposed data-parallel communication per step (s)"),
    StepPart("ep_comm_s", "expert-parallel comm", "Expert-parallel communication per step (s)"),
    StepPart("bubble_s", "pipeline bubble", "Pipeline bubble per step (s)"),
    StepPart("optimizer_s", "optimizer", "Optimizer per step (s)"),
)  # fmt: skip
FAILURE_PART = StepPart("failure_overhead_s", "failures and restarts",
                        "Failure overhead per step (s)")  # fmt: skip


@dataclass
class Estimate:
    """One value per hardware profile (the best layout that fits, or the given layout)."""

    step_time_s: Array
    compute_s: Array
    # compute slowed by the collectives it overlaps (they share the SMs)
    overlap_contention_s: Array
    tp_comm_s: Array
    pp_comm_s: Array
    dp_comm_exposed_s: Array
    ep_comm_s: Array
    bubble_s: Array
    optimizer_s: Array
    # context parallelism's KV exchange left exposed after the attention it overlaps
    cp_comm_s: Array
    failure_overhead_s: Array  # per step, from lost work and restarts
    tokens_per_s: Array
    tflops_per_gpu: Array  # model FLOPs
    mfu: Array
    goodput: Array
    time_to_train_h: Array
    gpu_hours: Array  # whole nodes rented
    comm_fraction_exposed: Array
    comm_to_compute_raw: Array
    fabric_share_of_comm: Array  # of the exposed communication, the part on the fabric
    memory_gb_per_gpu: Array
    fits_memory: NDArray[np.bool_]
    tp: Array
    pp: Array
    dp: Array
    micro_batch: Array
    virtual_stages: Array
    cp: Array
    # the pipeline's first and last stages' layers, and the split as ``7+8x14+7`` when the
    # stages are uneven (empty when even)
    first_stage_layers: Array
    last_stage_layers: Array
    stages: list[str]
    # the sequences per step the chosen layout runs: the workload's, or the nearest that it
    # divides (:func:`estimate`); batch_sequences / workload.batch_sequences - 1 is the move
    batch_sequences: Array
    # whether any layout divides the GPUs (and, for an exact batch, the batch) at all
    layout_found: NDArray[np.bool_]
    recompute: list[str]
    verdict: list[str]
    # the link most of the exposed communication waits on: nvlink, fabric, or none
    comm_link: list[str]
    extra: dict[str, Any] = field(default_factory=dict)

    def cost_usd(self, price_usd_per_gpu_hour: Array) -> Array:
        return self.gpu_hours * price_usd_per_gpu_hour

    def row(self, index: int) -> dict[str, Any]:
        """One profile's results as plain Python values (for JSON and tables)."""
        out: dict[str, Any] = {}
        for name, value in vars(self).items():
            if name == "extra":
                continue
            item = value[index]
            out[name] = item.item() if hasattr(item, "item") else item
        out["layout"] = (
            f"tp={int(self.tp[index])},pp={int(self.pp[index])},dp={int(self.dp[index])},"
            f"mb={int(self.micro_batch[index])},recompute={self.recompute[index]}"
            + (f",vpp={int(self.virtual_stages[index])}" if self.virtual_stages[index] > 1 else "")
            + (f",cp={int(self.cp[index])}" if self.cp[index] > 1 else "")
            + (
                f",first={int(self.first_stage_layers[index])},"
                f"last={int(self.last_stage_layers[index])}"
                if self.stages[index]
                else ""
            )
        )
        return out


def _ring_allreduce(size: Array, n: Array, bus: Array, step_latency: Array, base: float) -> Array:
    """NCCL ring all-reduce: base + 2(n-1) steps + 2(n-1)/n S / busbw; 0 for one rank."""
    time = base + 2 * (n - 1) * step_latency + 2 * (n - 1) / n * size / bus
    return np.where(n > 1, time, 0.0)


def _ring_gather(size: Array, n: Array, bus: Array, step_latency: Array, base: float) -> Array:
    """Ring reduce-scatter or all-gather of a full array of ``size`` bytes."""
    time = base + (n - 1) * step_latency + (n - 1) / n * size / bus
    return np.where(n > 1, time, 0.0)


def _recompute_label(mode: int, share: float) -> str:
    """none, selective, full (every layer) or block-N% (full recompute of N% of the layers)."""
    if RECOMPUTE_MODES[mode] is Recompute.FULL and share < 1.0:
        return f"block-{share:.0%}"
    return RECOMPUTE_MODES[mode].value


def _mlp_gemms(
    workload: Workload,
    ffn: float,
    t: Array | float,
    share: float,
    rows: Array | float = np.inf,
    width: float | None = None,
) -> list[Any]:
    """An MLP's two GEMMs as (M, K, N, FLOP weight) on one tensor-parallel rank: K = h,
    N = f / t (twice f when gated), then K = f / t, N = h; ``share`` of the layer's tokens
    pass through it (a MoE layer's routed experts: top-k of them), ``rows`` at a time (M:
    an expert's tokens; unbounded for the layer's every token, see :func:`_gemm_width`).
    ``width`` replaces h for a LatentMoE's routed experts, which run on its latent."""
    h = float(width or workload.hidden_size)
    up = 2.0 * ffn if workload.gated_mlp else ffn
    return [(rows, h, up / t, share * h * up), (rows, ffn / t, h, share * ffn * h)]


def _mamba_gemms(workload: Workload, t: Array | float) -> list[Any]:
    """A hybrid's Mamba-2 projections per MLP layer, as (M, K, N, FLOP weight) on one tensor-
    parallel rank: in_proj (K = h, N = its z, x, B, C and dt over t: a column-parallel
    linear) and out_proj (K = d_inner / t, N = h: row-parallel), as Megatron-Core's
    MambaMixer splits them, on every token (M unbounded, as a dense GEMM's); none for a
    transformer."""
    mamba = workload.mamba
    if mamba is None:
        return []
    h, width, inner = float(workload.hidden_size), float(mamba.in_proj_width), float(mamba.inner)
    share = mamba.layers / workload.layers
    every = np.inf
    return [(every, h, width / t, share * h * width), (every, inner / t, h, share * inner * h)]


def _gemm_width(workload: Workload, t: Array, expert_rows: Array | float = np.inf) -> Array:
    """The layer's GEMMs' effective width on one tensor-parallel rank.

    A GEMM of (M x K) by (K x N) does M K N multiply-adds on M K + K N + M N elements it
    moves, 1 / (1/M + 1/K + 1/N) per element, so that is its width; the layer's is the
    FLOP-weighted mean over QKV (K = h, N = (q + 2 kv) / t), the output projection
    (K = q / t, N = h) and the MLP (:func:`_mlp_gemms`). Tensor parallelism narrows one side
    of each GEMM, not both.

    M is every token of the micro-batch for the dense GEMMs (thousands of rows: b s / cp),
    which the fitted ``matrix_width_half`` absorbs, as it did before rows were counted: M
    is left unbounded there (counting it on every GEMM was measured and left out, docs/
    MODEL.md). A routed expert's GEMM sees only the tokens routed to it, ``expert_rows``
    (:func:`_expert_rows`): a few hundred for a fine-grained expert at a small expert-
    parallel size, where the grouped GEMM's efficiency falls with its rows.

    A MoE layer's MLP is its experts, each ``expert_ffn_size`` wide: the routed ones run
    unsplit (expert TP 1, as DeepSeek-V3 and Megatron-Core's MoE recipes run them) on the
    top-k of the tokens each, the shared ones on every token at TP; the dense layers of a
    model whose MoE layers are a share of them keep the dense MLP. A LatentMoE's routed
    experts read and write its latent (K and N of ``latent_size``), behind its down- and
    up-projection (h x latent, on every token). A fine-grained expert
    (Qwen3-30B-A3B's 768 wide, DeepSeek-V3's 2,048) moves far more bytes per FLOP than the
    dense MLP its ``ffn_size`` describes.
    """
    h, kv = float(workload.hidden_size), float(workload.kv_dim)
    q = float(workload.q_dim)
    a = workload.attention_layers / workload.layers  # a hybrid's attention per MLP layer
    every = np.inf  # a dense GEMM's rows: every token (above)
    gemms = [
        (every, h, (q + 2.0 * kv) / t, a * h * (q + 2.0 * kv)),
        (every, q / t, h, a * q * h),
    ]
    gemms += _mamba_gemms(workload, t)
    moe = workload.moe
    if moe is None:
        gemms += _mlp_gemms(workload, float(workload.ffn), t, 1.0)
    else:
        expert = float(moe.expert_ffn_size or workload.ffn)
        share = moe.moe_layer_fraction
        routed = float(workload.routed_width)
        gemms += _mlp_gemms(workload, expert, 1.0, moe.top_k * share, expert_rows, routed)
        if moe.latent_size:
            # the down- and up-projection, per token on every token, unsplit by TP
            # (Megatron-Core's TELinear parallel_mode "duplicated", moe_layer.py @d98e8a64ddf3)
            gemms += [
                (every, h, routed, share * h * routed),
                (every, routed, h, share * routed * h),
            ]
        if moe.shared_experts:
            gemms += _mlp_gemms(workload, expert, t, moe.shared_experts * share)
        if share < 1.0:
            gemms += _mlp_gemms(workload, float(workload.ffn), t, 1.0 - share)
    total = sum(weight for *_, weight in gemms)
    return sum(weight / (1.0 / m + 1.0 / k + 1.0 / n) for m, k, n, weight in gemms) / total


def _expert_parallel(workload: Workload, g: _Grid) -> Array:
    """Expert-parallel ranks: the workload's, at most the stage's dp x cp x tp GPUs (expert
    TP 1, as DeepSeek-V3 and Megatron-Core's MoE recipes run); 1 for a dense model."""
    moe = workload.moe
    if moe is None:
        return np.ones_like(g.dp * g.cp * g.t)
    return np.minimum(float(moe.expert_parallel or moe.experts), g.dp * g.cp * g.t)


def _rank_tokens(workload: Workload, g: _Grid) -> Array:
    """The tokens a rank's MoE layer dispatches per micro-batch: ``b·s/(t·cp)`` (sequence
    parallelism splits the micro-batch's tokens over TP, Megatron's requirement for MoE with
    TP > 1; context parallelism over CP)."""
    return g.b * workload.seq_len / (g.t * g.cp)


def _expert_rows(workload: Workload, g: _Grid) -> Array | float:
    """The rows of one routed expert's GEMM per micro-batch, balanced routing: each of the
    ``ep`` ranks of its expert-parallel group sends ``b s / (t cp)`` tokens (sequence
    parallelism splits them over TP), each to top-k of the ``E`` experts: ``b s ep k /
    (t cp E)``. Unbounded for a dense model."""
    moe = workload.moe
    if moe is None:
        return np.inf
    return _rank_tokens(workload, g) * _expert_parallel(workload, g) * moe.top_k / moe.experts


@dataclass(frozen=True)
class _Grid:
    """What every term reads: hardware profiles (P, 1) broadcast against layouts (1, K)."""

    col: dict[str, Array]  # the profiles' columns, shaped (P, 1)
    columns: HardwareProfiles  # the same, as profiles (for the fabric's scale curve)
    t: Array
    p: Array
    b: Array  # micro-batch
    v: Array  # interleaved chunks per stage
    rc: Array  # recompute mode index (RECOMPUTE_MODES)
    share: Array  # share of the layers fully recomputed
    cp: Array  # context-parallel ranks: each holds s / cp of every sequence
    dp: Array
    m: Array  # micro-batches per step per pipeline
    # the step's sequences over the workload's: the batch each layout runs (m x dp x b) is
    # the workload's target rounded to what the layout divides, unless it is exact
    batch_scale: Array
    # uneven pipeline stages: the heaviest stage's load over the mean (compute, and the
    # collectives per layer, wait on it), and the layers whose activations the binding stage
    # keeps (the first stage's with p micro-batches in flight, or the second's with p - 1)
    imbalance: Array
    activation_layers: Array
    stage_plans: NDArray[np.float64]  # (K, 3): each layout's first, middle and last stage layers
    nodes: Array
    nvlink_bus: Array
    net_step: Array  # the fabric's NCCL step latency
    beta: float  # bytes per activation element

    def fabric_bus(self, group_nodes: Array) -> Array:
        """The fabric's bus bandwidth per GPU for a group spanning ``group_nodes`` nodes."""
        return self.col["nic_bytes_per_s"] * fabric_efficiency(self.columns, group_nodes)


def _grid(workload: Workload, hw: HardwareProfiles, layout: LayoutGrid, c: ModelConstants) -> _Grid:
    col = {name: getattr(hw, name)[:, None] for name in vars(hw)}  # (P, 1)
    t, p, b = layout.tp[None, :], layout.pp[None, :], layout.micro_batch[None, :]  # (1, K)
    rc = layout.recompute[None, :]
    assert layout.recompute_share is not None and layout.cp is not None
    cp = layout.cp[None, :]
    dp = col["gpu_count"] / (t * p * cp)  # GPUs = TP x CP x PP x DP
    sequences = float(workload.batch_sequences)
    per_pass = dp * b  # sequences one micro-batch step takes across the data-parallel ranks
    m = sequences / per_pass
    if not workload.exact_batch:  # the nearest whole number of micro-batches, at least one
        m = np.maximum(1.0, np.round(m))
    plans = _stage_plans(workload.layers, layout)
    imbalance, activation_layers = _stages(workload.layers, layout, plans)
    return _Grid(
        col=col,
        columns=HardwareProfiles(**col),
        t=t,
        p=p,
        b=b,
        v=layout.virtual[None, :],
        rc=rc,
        share=np.where(rc == 2, layout.recompute_share[None, :], 0.0),
        cp=cp,
        dp=dp,
        m=m,
        batch_scale=m * per_pass / sequences,
        imbalance=imbalance[None, :],
        activation_layers=activation_layers[None, :],
        stage_plans=plans,
        nodes=np.ceil(col["gpu_count"] / col["gpus_per_node"]),
        nvlink_bus=col["scaleup_bytes_per_s"] * c.nvlink_efficiency,
        net_step=c.network_step_latency_s * col["fabric_alpha_multiplier"],
        # FP8 and NVFP4 jobs communicate 8-bit activations: the 4-bit gathers Transformer
        # Engine can run are not modelled
        beta=1.0 if workload.precision in LOW_PRECISIONS else 2.0,
    )


def _stage_plans(layers: int, layout: LayoutGrid) -> NDArray[np.float64]:
    """Each layout's first, middle and last stage's layers (:func:`stage_plan`), shape (K, 3):
    one plan per distinct (pp, first, last), however many layouts share it."""
    assert layout.first_stage is not None and layout.last_stage is not None
    keys = np.stack([layout.pp, layout.first_stage, layout.last_stage], axis=1)
    distinct, inverse = np.unique(keys, axis=0, return_inverse=True, equal_nan=True)
    plans = np.array(
        [
            stage_plan(
                layers,
                int(pp),
                None if np.isnan(first) else int(first),
                None if np.isnan(last) else int(last),
            )
            for pp, first, last in distinct
        ],
        dtype=np.float64,
    )
    return plans[inverse.reshape(-1)]


def _stages(layers: int, layout: LayoutGrid, plans: NDArray[np.float64]) -> tuple[Array, Array]:
    """Per layout: the heaviest pipeline stage's load over the mean (:func:`stage_imbalance`)
    and the layers whose activations the binding stage keeps. Even stages: 1 and layers / p.
    Uneven (:func:`stage_plan`): the first stage's layers with p micro-batches in flight or
    the second's with p - 1 under 1F1B (Narayanan et al. 2021), whichever keeps more."""
    pp = layout.pp
    first, middle, last = plans[:, 0], plans[:, 1], plans[:, 2]
    imbalance = stage_imbalance(layers, np.max(plans, axis=1), pp)
    second = np.where(pp > 2, middle, last)
    uneven = (first != middle) | (middle != last)
    kept = np.where(uneven, np.maximum(first, second * (pp - 1) / pp), layers / pp)
    return np.where(uneven, imbalance, 1.0), kept


@dataclass(frozen=True)
class LayoutRule:
    """A rule every TP x PP x CP layout keeps, stated once: the search keeps only the layouts
    that hold it (``holds``, over arrays of GPU counts and layouts) and ``--layout`` refuses one
    that breaks it in words (``says``, for one layout)."""

    holds: Callable[..., Any]  # (workload, gpus, tp, pp, cp, vpp) -> bool, over arrays
    says: Callable[..., str]  # (workload, gpus, tp, pp, cp, vpp) -> its words


LAYOUT_RULES: tuple[LayoutRule, ...] = (
    # Megatron splits the attention heads evenly across the TP ranks
    LayoutRule(
        lambda w, n, t, p, cp, v: np.mod(w.heads, t) == 0,
        lambda w, n, t, p, cp, v: f"tp={t} does not divide the {w.heads} heads",
    ),
    # CP splits each sequence into 2 cp chunks for causal load balance, and runs on fused
    # (flash) attention only (Megatron-Core's CP uses Transformer Engine's)
    LayoutRule(
        lambda w, n, t, p, cp, v: (cp == 1) | (np.mod(w.seq_len, 2 * cp) == 0),
        lambda w, n, t, p, cp, v: (
            f"cp={cp} needs seq_len divisible by 2 x cp (the sequence is "
            f"split in 2 cp chunks for causal load balance); seq_len is {w.seq_len}"
        ),
    ),
    LayoutRule(
        lambda w, n, t, p, cp, v: (cp == 1) | w.flash_attention,
        lambda w, n, t, p, cp, v: (
            f"cp={cp} runs on fused (flash) attention only; the workload says flash_attention false"
        ),
    ),
    # an interleaved schedule needs stages to interleave and a layer per chunk, the embedding
    # and the loss counted as a layer each, as Megatron-Core may place them (Llama 3.1 405B's
    # published GB200 layout: 126 layers, pp=16, vpp=8, 7 on the first and last stages)
    LayoutRule(
        lambda w, n, t, p, cp, v: (v == 1) | ((p > 1) & (w.layers + 2 >= p * v)),
        lambda w, n, t, p, cp, v: (
            f"vpp={v} needs pp > 1 and at least one layer per chunk "
            f"({w.layers} layers, plus the embedding and the loss, on pp={p})"
        ),
    ),
    # GPUs = TP x CP x PP x DP
    LayoutRule(
        lambda w, n, t, p, cp, v: np.mod(n, t * p * cp) == 0,
        lambda w, n, t, p, cp, v: (
            f"{'tp*pp*cp' if cp > 1 else 'tp*pp'} = {t * p * cp} does "
            f"not divide the profile's {n} GPUs"
        ),
    ),
)


def layout_problem(
    workload: Workload, gpus: int, tp: int, pp: int, cp: int = 1, vpp: int = 1
) -> str | None:
    """The first of ``LAYOUT_RULES`` one layout breaks, in words; None when it keeps them."""
    for rule in LAYOUT_RULES:
        if not bool(rule.holds(workload, gpus, tp, pp, cp, vpp)):
            return str(rule.says(workload, gpus, tp, pp, cp, vpp))
    return None


def _valid(workload: Workload, g: _Grid) -> Array:
    """Layouts that keep ``LAYOUT_RULES``, TP inside the NVLink domain, and a whole number of
    micro-batches (with an exact batch, only layouts whose data-parallel ranks and micro-batch
    divide it)."""
    kept = np.ones(np.broadcast_shapes(g.col["gpu_count"].shape, g.t.shape), dtype=bool)
    for rule in LAYOUT_RULES:
        kept &= rule.holds(workload, g.col["gpu_count"], g.t, g.p, g.cp, g.v)
    return (
        kept
        & (g.t <= g.col["nvlink_domain_gpus"])
        & (np.mod(g.m, 1.0) == 0)
        & (g.m >= 1)
        & ((g.v == 1) | (g.m >= g.p))  # an interleaved schedule needs a micro-batch per stage
    )


def _model_flops_step(workload: Workload) -> float:
    """The model FLOPs of one step (model-notes 4.1), recompute excluded."""
    # a hybrid's SSD scans are FLOPs beside its parameters' (0 for a transformer)
    attention_flops = workload.attention_flops_per_token + workload.ssm_scan_flops_per_token
    p_act, p_train = workload.active_params, workload.trainable_params
    if workload.lora is None:  # per token, fwd + bwd; multi-token prediction's depths beside
        model_flops_token = 6.0 * p_act + attention_flops + workload.mtp_flops_per_token
    else:  # frozen base: forward and input gradients only; weight gradients for adapters
        model_flops_token = 4.0 * p_act + 6.0 * p_train + attention_flops
    return model_flops_token * workload.batch_tokens


def _routed_flops_step(workload: Workload) -> float:
    """The routed experts' part of a step's model FLOPs (their GEMMs' forward and backward:
    6 per weight and token, 4 with a frozen base under LoRA); 0 when dense."""
    passes = 6.0 if workload.lora is None else 4.0
    return passes * workload.routed_active_params * workload.batch_tokens


def _load_imbalance(workload: Workload) -> float:
    """The most-loaded expert-parallel rank's routed tokens over the mean (``moe.
    load_imbalance``; 1 balanced, and for a dense model)."""
    return 1.0 if workload.moe is None else workload.moe.load_imbalance


def _stack_factor(workload: Workload, c: ModelConstants) -> float:
    """The software stack's compute efficiency over the fitted (Megatron-class) one."""
    return {
        Stack.MEGATRON: 1.0,
        Stack.FSDP: c.fsdp_efficiency_factor,
        Stack.EAGER: c.eager_efficiency_factor,
    }[workload.stack]


def _high_precision_flops_step(workload: Workload) -> float:
    """The part of a step's model FLOPs that runs in BF16 whatever the precision: attention
    (scaled dot-product attention) and the embedding and output matrices (as 6N counts them).
    Megatron-Core's FP8 recipes quantise the linear layers only ("SDPA/Embedding/LM Head/
    Router/Loss/Optimizer, etc., remain at their original high precision": NVIDIA/Megatron-LM
    docs/discussions/deepseek-v3-gb200-optimization @79e8592bb7a3); torchtitan's Float8
    skips the output layer (train_configs/llama3_8b.toml filter_fqns = ["output"]). A
    hybrid's SSD scans run in mamba_ssm's Triton kernels, not in Transformer Engine's FP8
    linears: at BF16 too. Each multi-token-prediction depth's pass of the output layer is
    one more LM head. A ``layer_precision`` adds the linear layers it keeps in BF16."""
    passes = _weight_passes(workload)
    per_token = (
        workload.attention_flops_per_token
        + workload.ssm_scan_flops_per_token
        + passes
        * (workload.embedding_params + workload.mtp_head_params + workload.linear_params_bf16)
    )
    return per_token * workload.batch_tokens


def _weight_passes(workload: Workload) -> float:
    """Matrix FLOPs per weight and token of a step: 6 (forward, and the backward's two
    GEMMs), 4 over a LoRA job's frozen base (no weight gradients)."""
    return 6.0 if workload.lora is None else 4.0


def _fp8_flops_step(workload: Workload) -> float:
    """The part of an nvfp4 job's step that its ``layer_precision`` runs in FP8 (MXFP8)."""
    return _weight_passes(workload) * workload.linear_params_fp8 * workload.batch_tokens


def _fp8_recipe_factor(workload: Workload, col: dict[str, Array], c: ModelConstants) -> Array:
    """The FP8 recipe's linear-layer rate over the per-tensor recipes', per profile: rowwise at
    torchao's measured ratio to tensorwise and blockwise at Transformer Engine's measured GEMM
    time ratio (Blackwell's on a Blackwell GPU, Hopper's on every other), every other recipe 1.
    The per-tensor recipes (tensorwise, delayed) are what the FP8 factors were measured and
    fitted on; torchao found delayed and dynamic per-tensor scaling
    within 1% of each other (meta-pytorch/float8_experimental#298). MXFP8 runs at tensorwise's
    rate: its measured cost (torchao and Megatron-Bridge: 4-5% below current scaling on
    Blackwell) worsened the held-out figures and was left out (docs/MODEL.md, Known limits); on
    a GPU without Blackwell's block-scaled tensor cores an MXFP8 job runs per-tensor FP8
    (Megatron-Bridge's performance recipes run fp8_cs on H100), costed the same."""
    if workload.fp8_recipe is Fp8Recipe.ROWWISE:
        return np.where(
            col["blackwell"] > 0, c.rowwise_fp8_factor_blackwell, c.rowwise_fp8_factor_hopper
        )
    if workload.fp8_recipe is Fp8Recipe.BLOCKWISE:
        return np.where(
            col["blackwell"] > 0, c.blockwise_fp8_factor_blackwell, c.blockwise_fp8_factor_hopper
        )
    return np.ones_like(col["peak_fp8"])


def _peak(workload: Workload, hw: HardwareProfiles) -> Array:
    """The dense peak a job's model FLOPs utilisation is stated against: its linear layers'
    precision's (FP8's, or FP4's for NVFP4 on Blackwell: :func:`_nvfp4_gain`; BF16's where the
    GPU has neither)."""
    if workload.precision is Precision.NVFP4:
        return np.where(hw.blackwell > 0, hw.peak_fp4, hw.peak_fp8)
    return hw.peak_fp8 if workload.precision is Precision.FP8 else hw.peak_bf16


def _nvfp4_gain(workload: Workload, col: dict[str, Array], c: ModelConstants) -> Array:
    """An NVFP4 job's linear-layer rate over FP8's (per-tensor scaling), per profile: the
    measured gain with quantisation included on an NVIDIA Blackwell GPU with FP4 tensor cores
    (Blackwell Ultra's at 3x its FP8 peak, Blackwell's at 2x: ``nvfp4_gain_*``); 1 for every
    other precision and on every other GPU, where the job runs FP8 (BF16 without FP8 either):
    Transformer Engine runs NVFP4 on Blackwell's tensor cores only (AMD's FP4 is MXFP4)."""
    if workload.precision is not Precision.NVFP4:
        return np.ones_like(col["peak_fp8"])
    ratio = np.where(col["blackwell"] > 0, col["peak_fp4"] / col["peak_fp8"], 1.0)
    return np.where(
        ratio >= ULTRA_FP4_RATIO,
        c.nvfp4_gain_blackwell_ultra,
        np.where(ratio > 1.0, c.nvfp4_gain_blackwell, 1.0),
    )


def _attention_recompute_share(workload: Workload, g: _Grid) -> Array:
    """The share of the layers whose core attention is recomputed: those a full recompute
    covers, and every layer under Megatron's selective recompute, which checkpoints the core
    attention and runs its forward again in the backward (Korthikanti et al. 2022, section
    4.2; Megatron-Core's default ``recompute_modules = ["core_attn"]``,
    megatron/core/transformer/transformer_config.py and attention.py's
    ``_checkpointed_attention_forward`` @d98e8a64ddf3). PyTorch's selective checkpointing
    (torchtitan's SAC) saves the matmul and attention outputs and recomputes only elementwise
    ops (torchtitan/distributed/activation_checkpoint.py ``_get_default_save_ops``
    @b5bcd76c66d0): no FLOPs counted."""
    selective = RECOMPUTE_MODES.index(Recompute.SELECTIVE)
    if workload.stack is Stack.MEGATRON:
        return np.where(g.rc == selective, 1.0, g.share)
    return g.share


@dataclass(frozen=True)
class _Compute:
    """Compute time per step and the part of it attention takes (both per profile x layout)."""

    time: Array
    attention: Array


NARROW_HEAD_WIDTH = 64  # the measured narrow head's width


def _head_width_rate(workload: Workload, col: dict[str, Array], c: ModelConstants) -> Array:
    """The share of 128-wide heads' attention rate a workload's heads reach on each GPU with
    FP8 tensor cores (Hopper on): ``narrow_head_attention_rate`` at 64 and below, 1 at 128
    and above (MLA's wider heads included: no gain is counted), log-linear between. On older
    GPUs 1: an A100's measured ratio was tried and left out (docs/MODEL.md, Known limits);
    without a fused kernel 1 as well (the measurement is fused attention's)."""
    if not workload.flash_attention:
        return np.ones_like(col["peak_bf16"])
    w = float(workload.head_width) if workload.kv_lora_rank is None else 128.0
    x = float(np.clip(np.log2(w / NARROW_HEAD_WIDTH), 0.0, 1.0))
    narrow = c.narrow_head_attention_rate ** (1.0 - x)
    return np.where(col["peak_fp8"] > col["peak_bf16"], narrow, 1.0)


def _compute(workload: Workload, g: _Grid, c: ModelConstants) -> _Compute:
    """Compute time per step (model-notes 4.1), unfused attention's score traffic included.

    In an FP8 job only the linear layers run at the FP8 peak; attention and the embedding
    and output matrices run at BF16's (:func:`_high_precision_flops_step`)."""
    col, t, share = g.col, g.t, g.share
    # full recompute re-runs the forward of the layers it covers: 8PD instead of 6PD (4.1)
    recompute = 1.0 + share / 3.0
    # the share of the layers whose core attention (scores, softmax, their product with V)
    # runs its forward twice: :func:`_attention_recompute_share`
    attention_share = _attention_recompute_share(workload, g)
    # the FLOPs grow with the batch the layout runs (its rounding of the target)
    flops = _model_flops_step(workload) * g.batch_scale
    high = _high_precision_flops_step(workload) * g.batch_scale
    attention_flops = workload.attention_flops_per_token * workload.batch_tokens * g.batch_scale
    # the per-rank matrix width at which a GPU reaches half its efficiency grows with its
    # ridge point (peak FLOP/s over HBM bytes/s): a faster GPU needs bigger matrices
    width = _gemm_width(workload, t, _expert_rows(workload, g))
    ridge = col["peak_bf16"] / col["hbm_bytes_per_s"] / REFERENCE_RIDGE
    eta = c.eta_compute_max * width / (width + c.matrix_width_half * ridge)
    # eta_compute_max is an A100's: a GPU whose matmuls reach less of their peak (measured
    # ceilings, gemm_ceilings.csv) reaches proportionally less of its own (a GPU without FP8
    # has its BF16 peak and ceiling in the FP8 columns)
    eta = eta * _stack_factor(workload, c) / REFERENCE_GEMM_CEILING
    bf16_rate = col["gpu_count"] * col["peak_bf16"] * eta * col["gemm_ceiling_bf16"]
    if workload.precision in LOW_PRECISIONS:
        fp8 = (
            c.fp8_efficiency_factor
            if workload.stack is Stack.MEGATRON
            else c.fsdp_fp8_efficiency_factor
        )
        peak = col["peak_fp8"]
        recipe = _fp8_recipe_factor(workload, col, c) * _nvfp4_gain(workload, col, c)
        factor = np.where(peak > col["peak_bf16"], fp8 * recipe, 1.0)
        linear_rate = col["gpu_count"] * peak * eta * factor * col["gemm_ceiling_fp8"]
    else:
        linear_rate = bf16_rate
    # attention's forward is a third of its forward and backward (4 of 12 l s h)
    # fused attention on heads narrower than 128 runs at a measured share of its rate
    attention = (
        (1.0 + attention_share / 3.0)
        * attention_flops
        / (bf16_rate * _head_width_rate(workload, col, c))
    )
    # an nvfp4 job's linear layers its layer_precision runs in FP8 (MXFP8: at per-tensor
    # FP8's rate, as an MXFP8 job's, :func:`_fp8_recipe_factor`)
    mid = _fp8_flops_step(workload) * g.batch_scale
    others = recompute * (
        (flops - high - mid) / linear_rate
        + mid * _nvfp4_gain(workload, col, c) / linear_rate
        + (high - attention_flops) / bf16_rate
    )
    # unbalanced routing: the most-loaded expert-parallel rank's routed GEMMs run longer by
    # what it receives over the mean, and every rank waits on it (:func:`_routed_flops_step`)
    others = (
        others
        + recompute
        * ((_load_imbalance(workload) - 1.0) * _routed_flops_step(workload) * g.batch_scale)
        / linear_rate
    )
    compute = others + attention
    if not workload.flash_attention:
        # unfused attention moves its s x s scores through HBM: the fused scale-mask-softmax
        # reads and writes them (2 + 2 bytes per element forward, 6 backward) and dropout
        # adds a read, a write and a mask (5 each way); a full recompute repeats the forward
        s = workload.seq_len
        forward = 4.0 + (5.0 if workload.dropout else 0.0)
        backward = 6.0 + (5.0 if workload.dropout else 0.0)
        per_score = forward * (1.0 + attention_share) + backward
        scores_per_gpu = (workload.layers / g.p) * g.m * g.b * (workload.heads / t) * float(s) * s
        traffic = scores_per_gpu * per_score / (col["hbm_bytes_per_s"] * c.hbm_efficiency)
        compute, attention = compute + traffic, attention + traffic
    compute = (
        compute
        + _moe_permutation(workload, g, c)
        + _expert_gemm_calls(workload, g, c)
        + _mamba_traffic(workload, g, c)
        + _expert_activation(workload, g, c)
    )
    # uneven pipeline stages: every stage waits on the heaviest
    return _Compute(time=compute * g.imbalance, attention=attention * g.imbalance)


# BF16 activations: Megatron-Core's dispatcher permutes the layer's hidden states as they are;
# an FP8 recipe quantises them inside the experts' grouped GEMM, after the permutation
PERMUTED_BYTES = 2.0


# the activation's input, output and gradients in BF16
ACTIVATION_BYTES = 2.0
# quantising one element for a low-precision GEMM: its BF16 read and the two copies Transformer
# Engine writes, one scaled along rows and one along columns, the forward's and the weight
# gradient's operands ("Both must be quantized independently from the full-precision data",
# docs/features/low_precision_training/mxfp8/mxfp8.rst; Hopper's FP8 needs a transposed copy,
# fp8_current_scaling.rst @d0067d0da6cb): FP8 1 byte each, NVFP4 half. Not counted: the block
# scales (1/32 and 1/16 of a byte) and current scaling's second read for its amax
QUANTISED_BYTES = {Precision.FP8: 2.0 + 2.0 * 1.0, Precision.NVFP4: 2.0 + 2.0 * 0.5}


def _expert_activation(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """The routed experts' activation function, seconds per step (memory-bound, at
    ``hbm_efficiency`` of HBM bandwidth), beside their GEMMs. Megatron-Core's grouped MLP runs
    it as its own kernel on every routed copy of a token between the two grouped GEMMs
    (megatron/core/transformer/moe/experts.py @d98e8a64ddf3, TEGroupedMLP: the fused
    ``weighted_bias_swiglu_impl``, ``weighted_bias_quick_geglu_impl`` or
    ``weighted_squared_relu_impl``, each also weighting the copy by its routing probability).
    Per copy, in BF16, its forward reads the first GEMM's output (``g·f`` elements: ``2f``
    gated, ``f`` not) and writes ``f``; its backward reads the output's gradient and the saved
    input and writes the input's gradient (``2g·f + f``); a full recompute repeats the
    forward, and so does Megatron-Core's selective recompute of ``moe_act``
    (``moe_act_recompute``). Each rank runs ``k·b·s/(t·cp)`` copies per MoE layer and
    micro-batch (balanced routing; sequence parallelism splits the tokens over TP, the experts
    run at expert TP 1).
    A dense MLP's (and a shared expert's) activation is not counted: it is inside the GEMM
    efficiency the dense calibration rows fitted; the routed experts' is per routed copy on
    the expert's width, which no calibration row has (counting the dense ones too and
    refitting was measured and left out, docs/MODEL.md).

    An FP8 or NVFP4 expert (:attr:`Workload.routed_expert_passes`: ``layer_precision`` may
    keep some in BF16) also quantises each grouped GEMM's input per copy
    (``QUANTISED_BYTES`` an element): the copy (``w``, the routed width) and the activation's
    output (``f``) forward, again under full recompute, and the gradients of the second GEMM's
    output (``w``) and of the first's (``g·f``) backward. A dense layer's quantisation is
    inside the fitted ``fp8_efficiency_factor``, as its activation is.

    Transformer Engine's fused grouped MLP (``moe.fused_grouped_mlp``) runs the activation and
    its gradient in the grouped GEMMs' epilogues (cuDNN frontend's
    ``grouped_gemm_glu_wrapper_sm100`` and ``grouped_gemm_dglu_wrapper_sm100``,
    transformer_engine/pytorch/ops/fused/grouped_mlp.py @d0067d0da6cb) and writes their
    outputs quantised: only the copy and the second GEMM's output gradient are moved apart."""
    moe = workload.moe
    if moe is None:
        return np.zeros_like(g.t * g.col["gpu_count"])
    gate = 2.0 if workload.gated_mlp else 1.0
    f = float(moe.expert_ffn_size or workload.ffn)
    copies = _rank_tokens(workload, g) * moe.top_k
    w = float(workload.routed_width)
    if moe.fused_grouped_mlp:
        # the fused grouped MLP runs the activation (and its gradient) in the grouped GEMMs'
        # epilogues and writes their outputs quantised: only the copy and the second GEMM's
        # output gradient are quantised apart
        per_pass = np.zeros_like(g.share)
        quantised = w * (1.0 + g.share) + w
    else:
        # a full recompute repeats the forward in its share of the layers, moe_act's in the
        # rest
        again = 1.0 if workload.moe_act_recompute else g.share
        elements = (gate + 1.0) * f * (1.0 + again) + (2.0 * gate + 1.0) * f
        per_pass = elements * ACTIVATION_BYTES
        quantised = (w + f) * (1.0 + g.share) + w + gate * f
    total = sum(
        passes * (per_pass + quantised * QUANTISED_BYTES.get(precision, 0.0))
        for precision, passes in workload.routed_expert_passes.items()
    )
    return (g.m / g.p) * copies * total / (g.col["hbm_bytes_per_s"] * c.hbm_efficiency)


def _moe_permutation(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """The token shuffles of every MoE layer, seconds per step (memory-bound, at
    ``hbm_efficiency`` of HBM bandwidth). Megatron-Core's all-to-all dispatcher
    (megatron/core/transformer/moe/token_dispatcher.py @0014f13713bf) permutes each token's
    activations into one copy per routed expert before the all-to-all (written once: top-k
    copies of h elements), sorts what arrives by local expert when a rank holds more than
    one (read and written), and after the experts undoes both (read and written, then read
    once and summed back into one token): ``2 + 2/k`` passes of ``k·h`` elements per token,
    ``4`` more with the sort, forward; the backward moves the gradients through the same
    shuffles, and a full recompute repeats the forward's. Per GPU, each micro-batch's
    ``b·s/(t·cp)`` tokens. A LatentMoE permutes its latent (``latent_size`` elements per copy,
    not h: the down-projection runs before the dispatch); each multi-token-prediction depth's
    MoE layer shuffles as the others."""
    moe = workload.moe
    if moe is None:
        return np.zeros_like(g.t * g.col["gpu_count"])
    ep = _expert_parallel(workload, g)
    sort = np.where(moe.experts / ep > 1, 4.0, 0.0)
    forward = 2.0 + 2.0 / moe.top_k + sort
    passes = forward * (1.0 + g.share) + forward
    moe_layers = workload.moe_layer_passes
    elements = (
        (g.m * moe_layers / g.p)
        * passes
        * _rank_tokens(workload, g)
        * moe.top_k
        * workload.routed_width
    )
    return elements * PERMUTED_BYTES / (g.col["hbm_bytes_per_s"] * c.hbm_efficiency)


def _mamba_bytes(mamba: Mamba, t: Array) -> tuple[Array, Array]:
    """The HBM bytes per token of one Mamba-2 mixer's work outside its two projections'
    GEMMs, (forward, backward), at TP ``t`` (heads and groups split over it): Megatron-Core's
    training path (megatron/core/ssm/mamba_mixer.py ``_ssm_training`` @d98e8a64ddf3) copies
    in_proj's output to batch-major, runs mamba_ssm's fused ``mamba_split_conv1d_scan_
    combined`` (state-spaces/mamba mamba_ssm/ops/triton/ssd_combined.py
    ``MambaSplitConv1dScanCombinedFn`` @e9594ce), copies its output back and norms it
    (``self.norm``). Each kernel reads and writes its tensors once: the causal convolution
    over x, B and C; the chunked scan's five kernels (``_chunk_cumsum_fwd``, ``_chunk_state_
    fwd``, ``_state_passing_fwd``, ``_bmm_chunk_fwd``, ``_chunk_scan_fwd``), whose chunk states
    (``H P N / Q`` per token) and ``C B^T`` blocks (``G Q`` per token) are FP32; and the
    backward's recomputed convolution, states and ``C B^T``, its gradient kernels for z, the
    states (and their passing back), x, B, C, ``C B^T`` and the decay, the two ``C B^T``
    products' gradients and the convolution's. BF16 activations; dt's per-head scalars left
    out."""
    d = mamba.inner / t
    bc = mamba.groups * mamba.state_size / t  # B (or C): groups x state
    heads = mamba.heads / t
    width = 2.0 * d + 2.0 * bc + heads  # in_proj's output: z, x, B, C, dt
    conv = d + 2.0 * bc  # x, B and C, the convolution's channels
    states = 4.0 * heads * mamba.head_dim * mamba.state_size / mamba.chunk_size  # FP32
    cb = 4.0 * (mamba.groups / t) * mamba.chunk_size  # FP32 C B^T blocks
    bf16 = 2.0
    # one term per kernel (or copy): what it reads and writes, in bytes per token
    forward = sum(
        (
            bf16 * 2.0 * width,  # in_proj's output to batch-major (read, write)
            bf16 * 2.0 * conv,  # the causal convolution (read, write)
            bf16 * (bc + d) + states,  # chunk states: B, x in; states out
            2.0 * states,  # states passed between chunks (read, write)
            bf16 * 2.0 * bc + cb,  # C B^T: C, B in; blocks out
            cb + bf16 * (2.0 * d + bc) + states + bf16 * 2.0 * d,  # the scan: y, ungated y out
            bf16 * 2.0 * d,  # the output back to sequence-major (read, write)
            bf16 * 2.0 * d,  # the norm (read, write)
        )
    )
    backward = sum(
        (
            bf16 * 3.0 * d,  # the norm's gradient: dy and y in, dx out
            bf16 * 2.0 * d,  # the copy back's gradient
            bf16 * 2.0 * width,  # in_proj's output gradient to sequence-major
            bf16 * 2.0 * conv,  # the convolution, recomputed
            bf16 * 2.0 * bc + cb,  # C B^T, recomputed
            bf16 * (bc + d) + states + 2.0 * states,  # the states and their passing, again
            bf16 * 6.0 * d,  # dz: x, z, y, dy in; dz, dy out
            bf16 * (bc + d) + states,  # the states' gradient: C, dy in
            3.0 * states,  # passed back between chunks
            bf16 * (3.0 * d + bc) + cb + states,  # dx: x, B, dy, C B^T, dstates in; dx out
            bf16 * (d + 2.0 * bc) + states,  # dB: x, B, dstates in; dB out
            1.5 * states + bf16 * (d + 2.0 * bc) + states / 2.0,  # dC: states cast to BF16
            bf16 * 2.0 * d + cb,  # the C B^T gradient: x, dy in
            2.0 * (bf16 * 3.0 * bc + cb),  # its products with C and with B into dB and dC
            bf16 * 2.0 * d + cb,  # the decay's gradient: x, dy, C B^T in
            bf16 * 3.0 * conv,  # the convolution's gradient
        )
    )
    return forward, backward


def _mamba_traffic(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """A hybrid's Mamba-2 mixers' memory-bound work (:func:`_mamba_bytes`), seconds per step
    at ``hbm_efficiency`` of HBM bandwidth: each micro-batch's ``b·s/cp`` tokens through each
    of the stage's Mamba-2 layers, forward and backward, and the forward again where a full
    recompute covers the layer. Zero for a transformer."""
    mamba = workload.mamba
    if mamba is None:
        return np.zeros_like(g.t * g.col["gpu_count"])
    forward, backward = _mamba_bytes(mamba, g.t)
    tokens = g.b * workload.seq_len / g.cp
    per_token = forward * (1.0 + g.share) + backward
    moved = (g.m * mamba.layers / g.p) * tokens * per_token
    return moved / (g.col["hbm_bytes_per_s"] * c.hbm_efficiency)


def _expert_gemm_calls(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """The routed experts' per-expert GEMM calls, seconds per step, beside their FLOPs.

    Megatron-Core's grouped MLP (``--moe-grouped-gemm``, TEGroupedMLP) runs Transformer
    Engine's GroupedLinear, whose grouped GEMM is a loop of one cuBLAS GEMM per local expert
    over a few CUDA streams ("the per-tensor NVFP4 grouped GEMM currently runs as a per-expert
    loop of cuBLASLt GEMMs across multiple CUDA streams", NVIDIA/TransformerEngine PR #3134;
    multi-stream cuBLAS since PR #853): each call costs ``expert_gemm_call_s`` whatever its
    size, so a rank holding ``E/EP`` experts pays it ``E/EP`` times per grouped GEMM ("a large
    EP can reduce the number of local experts, thereby reducing quantization and other
    overheads, and improving the performance of Grouped GEMM": NVIDIA/Megatron-LM
    docs/discussions/deepseek-v3-gb200-optimization @79e8592bb7a3). Six grouped GEMMs per MoE
    layer and micro-batch: the two linear layers' forward, data-gradient and weight-gradient;
    a full recompute repeats the forward's two (its share of the layers). A PyTorch stack's
    experts (torchtitan's ``torch._grouped_mm``) run as one kernel: none; nor do Transformer
    Engine's fused grouped MLP's (``moe.fused_grouped_mlp``: "GroupedLinear -> ScaledSwiGLU ->
    GroupedLinear" as a graph-safe path with the experts' token counts on the device,
    NVIDIA/TransformerEngine benchmarks/linear/benchmark_graph_safe_grouped_mlp.py
    @d0067d0da6cb)."""
    moe = workload.moe
    if moe is None or workload.stack is not Stack.MEGATRON or moe.fused_grouped_mlp:
        return np.zeros_like(g.t * g.col["gpu_count"])
    local = moe.experts / _expert_parallel(workload, g)
    calls = 6.0 + 2.0 * g.share
    moe_layers = workload.moe_layer_passes  # multi-token prediction's MoE layers among them
    return (g.m * moe_layers / g.p) * local * calls * c.expert_gemm_call_s


def _tp_comm(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """Tensor parallel: 4 all-reduces per layer per micro-batch (+2 with full recompute):
    one in the forward and one in the backward of each sublayer, attention and MLP (+1 with
    full recompute). A hybrid's Mamba-2 layer is one more such sublayer: Megatron-Core's
    MambaMixer is a column-parallel in_proj and a row-parallel out_proj over the heads and
    groups (megatron/core/ssm/mamba_mixer.py), one collective each way as attention's; its
    MLP layers carry the attention and Mamba-2 layers spread over them. Each multi-token-
    prediction depth adds an attention and an MLP sublayer."""
    tp_volume = g.b * (workload.seq_len / g.cp) * workload.hidden_size * g.beta
    mixers = (workload.attention_layers + workload.mamba_layers) / workload.layers
    sublayers = workload.layers * (1.0 + mixers) + 2.0 * workload.mtp_layers
    tp_colls = (2.0 + g.share) * sublayers / workload.layers
    tp_time = (
        (g.m * workload.layers / g.p)
        * tp_colls
        * _ring_allreduce(
            tp_volume, g.t, g.nvlink_bus, c.nvlink_step_latency_s, c.collective_base_latency_s
        )
    )
    if workload.tp_comm_overlap:  # collectives split and pipelined with the GEMMs
        tp_time = tp_time * (1.0 - c.tp_overlap_share)
    return tp_time


def _pp_comm(workload: Workload, g: _Grid, c: ModelConstants) -> Array:
    """Pipeline: activations cross (p-1) stage boundaries on the critical path, fwd + bwd."""
    p = g.p
    tp_volume = g.b * (workload.seq_len / g.cp) * workload.hidden_size * g.beta
    multi_node = g.nodes > 1
    p2p_bus = np.where(multi_node, g.fabric_bus(np.minimum(p, g.nodes)), g.nvlink_bus)
    p2p_latency = np.where(multi_node, g.net_step, c.nvlink_step_latency_s)
    return np.where(
        p > 1,
        2.0 * (p - 1) * g.v * (p2p_latency + tp_volume / g.t / np.maximum(p2p_bus, 1.0)),
        0.0,
    )


def _cp_comm(
    workload: Workload, g: _Grid, c: ModelConstants, attention: Array
) -> tuple[Array, Array]:
    """Context parallelism's KV exchange (model-notes; Megatron-Core's context_parallel
    guide): each rank's K and V chunk goes round the CP ring, all-gathered in the forward,
    gathered again and its gradient reduce-scattered in the backward (and once more when a
    recompute repeats attention's forward). GQA's few KV heads keep it small. As in Ring
    Attention, a chunk's transfer overlaps the attention on the previous one, so only what
    exceeds the layer's attention compute is exposed. A sliding-window layer needs no ring:
    each of a rank's two chunks takes the band's keys and values (``attention_window``
    tokens, at most a chunk) from the rank holding the chunk before it, one step.
    (exposed time, its part on the fabric)"""
    cp, t, p, m = g.cp, g.t, g.p, g.m
    kv_token = g.b * 2.0 * workload.kv_dim * g.beta / t
    kv_chunk = kv_token * (workload.seq_len / cp)
    ring = t * cp  # a CP group is the counterparts of a TP group: t x cp consecutive ranks
    on_fabric = ring > g.col["nvlink_domain_gpus"]
    bus = np.where(
        on_fabric,
        g.fabric_bus(np.maximum(np.ceil(ring / g.col["gpus_per_node"]), 1.0)),
        g.nvlink_bus,
    )
    latency = np.where(on_fabric, g.net_step, c.nvlink_step_latency_s)
    # a recomputed core attention exchanges its K and V once more
    passes = 3.0 + _attention_recompute_share(workload, g)
    full = passes * (cp - 1) * (latency + kv_chunk / np.maximum(bus, 1.0))
    band_tokens = np.minimum(2.0 * float(workload.attention_window or 0), workload.seq_len / cp)
    band = passes * (latency + kv_token * band_tokens / np.maximum(bus, 1.0))
    windowed = workload.windowed_layers / workload.layers
    per_layer = (1.0 - windowed) * full + windowed * band
    # the attention compute per layer and micro-batch
    layer_calls = m * workload.layers / p
    attention_layer = attention / layer_calls
    exposed = np.where(cp > 1, layer_calls * np.maximum(0.0, per_layer - attention_layer), 0.0)
    return exposed, np.where(on_fabric, exposed, 0.0)


@dataclass(frozen=True)
class _Parameters:
    """Parameters held per GPU (model-notes 4.8) and the expert groups they shard over."""

    ep: Array  # expert-parallel ranks
    edp: Array  # expert-data-parallel ranks: each expert's copies
    here: Array  # parameters one GPU holds
    experts: Array  # the routed experts' among them, whose gradients reduce over edp ranks
    sharded: Array  # what one optimizer shard holds once ZeRO splits each part over its group
    lora: Array  # a LoRA job's trainable adapters per GPU


def _parameters(workload: Workload, g: _Grid) -> _Parameters:
    # the dense part split by TP and PP; the routed experts split by PP and by EP over the
    # stage's dp x tp GPUs (expert TP 1, as DeepSeek-V3 and Megatron-Core's MoE recipes run),
    # so each expert's copies form an expert-data-parallel group of dp x tp / ep GPUs, over
    # which ZeRO shards its states and its gradients reduce
    # CP ranks hold the same weights: the gradient and optimizer group is dp x cp
    t, p, dp = g.t, g.p, g.dp * g.cp
    ep = _expert_parallel(workload, g)
    edp = dp * t / ep
    # the embeddings sit on the end stages, not spread over them: the most loaded stage holds
    # its layers and one vocabulary x hidden matrix (both when one stage holds the model);
    # as Megatron-LM's theoretical memory formula counts them
    embedding = float(workload.embedding_params)
    one_matrix = float(workload.vocab_size * workload.hidden_size)
    end_stage = np.where(p > 1, one_matrix, embedding)
    layers_dense = workload.total_params - workload.expert_params - embedding
    dense_here = (layers_dense / p + end_stage) / t
    experts_here = workload.expert_params / (p * ep)
    return _Parameters(
        ep=ep,
        edp=edp,
        here=dense_here + experts_here,
        experts=experts_here,
        sharded=dense_here / dp + experts_here / edp,
        lora=workload.trainable_params / (t * p),
    )


def _expert_group(g: _Grid, c: ModelConstants, params: _Parameters) -> tuple[Array, Array, Array]:
    """The routed experts' expert-data-parallel group, as a ring: (ranks, bus, step latency).

    Megatron-Core lays the expert grid over a stage's ``t·dp`` consecutive ranks (expert TP
    1, expert ranks innermost: ``parallel_state.py``'s expert rank generator, order
    tp-cp-ep-dp-pp), as NeMo AutoModel's FSDP2 shards the experts over its ``ep_shard``
    mesh (``components/moe/parallelizer.py``), so an expert's ``edp`` copies sit ``ep`` ranks
    apart: a node of ``per_node`` GPUs holds ``per_node / ep`` of them, and at ``ep`` of a
    node or more, one. Each GPU then reduces (or gathers) its experts over its own NIC: the
    node's NICs do not share that group's traffic as they share the dense part's
    (:func:`_dp_comm`). At ``edp`` 1 each expert has one copy and nothing to reduce."""
    dp, t, per_node = g.dp * g.cp, g.t, g.col["gpus_per_node"]
    edp = params.edp
    per_node_copies = np.clip(np.minimum(per_node, t * dp) / params.ep, 1.0, np.maximum(edp, 1.0))
    return (edp, *_node_ring(g, c, edp, per_node_copies))


def _node_ring(g: _Grid, c: ModelConstants, ranks: Array, per_node: Array) -> tuple[Array, Array]:
    """A ring of ``ranks`` GPUs, ``per_node`` of them in each node: (bus bandwidth, step
    latency). Inside one node, NVLink; across nodes, the node's ``per_node`` NICs share the
    traffic that crosses it, up to NVLink's bandwidth, at the fabric's step latency."""
    nodes = np.ceil(ranks / per_node)
    bus = np.where(
        nodes > 1, np.minimum(g.nvlink_bus, per_node * g.fabric_bus(nodes)), g.nvlink_bus
    )
    return bus, np.where(nodes > 1, g.net_step, c.nvlink_step_latency_s)


def _dp_comm(
    workload: Workload, g: _Grid, c: ModelConstants, params: _Parameters, compute: Array
) -> tuple[Array, Array]:
    """Data parallel / ZeRO / FSDP (4.4) over a hierarchical group (4.3): (time, exposed)."""
    # the gradients are reduced over the data-parallel-with-context group, dp x cp ranks
    dp, t, p, per_node = g.dp * g.cp, g.t, g.p, g.col["gpus_per_node"]
    dp_per_node = np.maximum(1.0, np.minimum(dp, per_node / np.minimum(t * p, per_node)))
    dp_bus, dp_latency = _node_ring(g, c, dp, dp_per_node)
    base = c.collective_base_latency_s
    # the dense part's weights (and gradients) go over the dp group; a MoE's routed experts
    # over their own copies (:func:`_expert_group`), a reduce-scatter the same ring as a
    # gather; a LoRA job reduces only its adapters' gradients, over dp
    dense_bytes = (params.here - params.experts) * 2.0
    expert_bytes = params.experts * 2.0
    edp, edp_bus, edp_latency = _expert_group(g, c, params)
    routed = params.experts > 0
    lora_bytes = params.lora * 2.0
    if workload.zero_stage == 3:
        # FSDP gathers the weights for the forward and again for the backward of every
        # micro-batch, layer by layer, and reduce-scatters the gradients once per step;
        # the gathers are prefetched under the whole compute, not only the backward. It
        # shards and gathers every weight, a LoRA job's frozen base too (FSDP2's
        # fully_shard wraps the module's parameters whether they train or not)
        gather = _ring_gather(dense_bytes, dp, dp_bus, dp_latency, base) + np.where(
            routed, _ring_gather(expert_bytes, edp, edp_bus, edp_latency, base), 0.0
        )
        reduce = (
            _ring_gather(lora_bytes, dp, dp_bus, dp_latency, base)
            if workload.lora is not None
            else gather
        )
        dp_time = (
            2.0 * g.m * gather
            + reduce
            + 2.0 * g.m * (workload.layers / p) * np.where(dp > 1, dp_latency, 0.0)
        )
        dp_exposed = np.maximum(0.0, dp_time - c.dp_overlap * compute)
    else:
        dp_time = (
            _ring_allreduce(lora_bytes, dp, dp_bus, dp_latency, base)
            if workload.lora is not None
            else _ring_allreduce(dense_bytes, dp, dp_bus, dp_latency, base)
            + np.where(routed, _ring_allreduce(expert_bytes, edp, edp_bus, edp_latency, base), 0.0)
        )
        # Megatron-Core reduces the gradients in the backward of each step's last micro-batch
        # only (the schedules run the others under ``no_sync``), or, interleaved, of each
        # model chunk's last micro-batch: the last group of ``p`` micro-batches
        backward = compute * 2.0 / 3.0
        window = backward * np.minimum(1.0, np.where(g.v > 1, g.p, 1.0) / g.m)
        dp_exposed = np.maximum(0.0, dp_time - c.dp_overlap * window)
    return dp_time, dp_exposed


# the MoE dispatch's and combine's algorithm bandwidth over NVLink by the ranks exchanging
# on it: HybridEP (Megatron-Core's flex dispatcher, which NVIDIA's GB200 and GB300 benchmark
# configurations run) among 8 to 36 GB200 ranks, BF16, 32 SMs, through the Torch API, the
# mean of dispatch and combine, GB/s of the GB200's 900 GB/s unidirectional NVLink
# (deepseek-ai/DeepEP branch hybrid-ep, docs/README_Hybrid-EP.md @17cfb817bcce)
HYBRIDEP_GB200_GBPS = {8: 557.3, 16: 522.5, 24: 495.5, 32: 474.4, 36: 463.5}
HYBRIDEP_GB200_NVLINK_GBPS = 900.0
_HYBRIDEP_LOG2_RANKS = np.log2(np.array(list(HYBRIDEP_GB200_GBPS), dtype=np.float64))
_HYBRIDEP_SHARES = np.array(list(HYBRIDEP_GB200_GBPS.values())) / HYBRIDEP_GB200_NVLINK_GBPS


def _nvlink_alltoall_share(ranks: Array) -> Array:
    """The share of a GPU's unidirectional NVLink the MoE all-to-all reaches among ``ranks``
    peers on it: HybridEP's measured table (``HYBRIDEP_GB200_GBPS``), interpolated on the
    ranks' logarithm, its first row below 8 ranks and its last above 36 (``np.interp`` holds
    the ends: not extrapolated)."""
    return np.interp(np.log2(np.maximum(ranks, 1.0)), _HYBRIDEP_LOG2_RANKS, _HYBRIDEP_SHARES)


def _fabric_copy_share(moe: MoE, ep: Array, local: Array) -> Array:
    """The share of a token's routed copies bound for other NVLink domains that cross the
    fabric. NCCL's all-to-all sends each copy (1). DeepEP and HybridEP send a token once to
    each other domain that holds any of its experts and fan it out over NVLink there
    (DeepSeek-V3 report, arXiv:2412.19437 3.2.2; deepseek-ai/DeepEP's internode kernels;
    HybridEP's per-node ``rdma_to_attn_map``): with ``ep / local`` domains of ``E local / ep``
    experts each and uniform top-k routing without replacement, a domain other than the
    sender's holds one of a token's experts with probability ``1 - C(E - E_d, k) / C(E, k)``,
    so the copies over the fabric are ``(domains - 1)`` times that, against ``k (domains -
    1) / domains`` without it."""
    if moe.dispatcher is Dispatcher.ALLTOALL:
        return np.ones_like(np.asarray(ep, dtype=float))
    domains = np.maximum(np.asarray(ep, dtype=float) / np.maximum(local, 1.0), 1.0)
    experts, k = float(moe.experts), moe.top_k
    per_domain = experts / domains
    missed = np.ones_like(domains)
    for i in range(k):
        missed = missed * np.clip((experts - per_domain - i) / (experts - i), 0.0, 1.0)
    return np.where(domains > 1.0, domains * (1.0 - missed) / k, 1.0)


def _ep_comm(
    workload: Workload, g: _Grid, c: ModelConstants, ep: Array, compute: Array
) -> tuple[Array, Array]:
    """Expert parallel all-to-all (4.4): (time, the part of it spent on the fabric)."""
    moe = workload.moe
    if moe is None:
        zero = np.zeros_like(compute)
        return zero, zero
    t, p, m = g.t, g.p, g.m
    domain, per_node, net_step = g.col["nvlink_domain_gpus"], g.col["gpus_per_node"], g.net_step
    moe_layers = workload.moe_layer_passes  # multi-token prediction's MoE layers among them
    # with TP, sequence parallelism splits the tokens (Megatron requires it for MoE with
    # TP > 1): each rank dispatches s/t of them, then gathers over TP on NVLink; a LatentMoE
    # dispatches its latent (Megatron-Core token_dispatcher.py: hidden_dim = moe_latent_size)
    volume = _rank_tokens(workload, g) * moe.top_k * workload.routed_width * g.beta * (ep - 1) / ep
    # the most-loaded rank receives (dispatch) and returns (combine) load_imbalance times the
    # mean, and each all-to-all ends with its largest transfer
    volume = volume * moe.load_imbalance
    local = np.minimum(ep, domain / t)
    nvlink_part = (np.maximum(local, 1.0) - 1) / ep
    nic_part = np.maximum(0.0, ep - local) / ep
    a2a_nodes = np.ceil(ep * t / per_node)
    a2a_bus = g.fabric_bus(np.maximum(a2a_nodes, 1.0)) * c.alltoall_efficiency
    # the copies bound for peers outside the NVLink domain, over the fabric
    on_fabric = volume * nic_part * _fabric_copy_share(moe, ep, local) / np.maximum(a2a_bus, 1.0)
    one = (
        c.collective_base_latency_s
        + (ep - 1) * np.where(nic_part > 0, net_step, c.nvlink_step_latency_s)
        + volume * nvlink_part / (g.col["scaleup_bytes_per_s"] * _nvlink_alltoall_share(local))
        + on_fabric
    )
    ep_time = np.where(ep > 1, (m * moe_layers / p) * 4.0 * one, 0.0)
    # the part of it spent on the fabric: bytes to peers outside the NVLink domain
    ep_fabric = np.where(
        (ep > 1) & (nic_part > 0),
        (m * moe_layers / p) * 4.0 * ((ep - 1) * net_step + on_fabric),
        0.0,
    )
    if workload.ep_comm_overlap:
        # hidden under the compute of the micro-batch it is paired with, never more
        hidden = c.ep_overlap_share * np.minimum(ep_time, compute)
        kept = np.where(ep_time > 0, 1.0 - hidden / np.maximum(ep_time, 1e-30), 1.0)
        ep_time, ep_fabric = ep_time * kept, ep_fabric * kept
    return ep_time, ep_fabric


def _optimizer(workload: Workload, g: _Grid, c: ModelConstants, params: _Parameters) -> Array:
    """The optimizer step (4.7): the bytes of its parameter shard through HBM."""
    optimizer_params = (
        (params.lora / np.where(workload.zero_stage >= 1, g.dp * g.cp, 1.0))
        if workload.lora is not None
        else (params.sharded if workload.zero_stage >= 1 else params.here)
    )
    # BF16 weights: every state the step reads and writes is half as wide
    width = 0.5 if workload.bf16_weights else 1.0
    return optimizer_params * c.optimizer_bytes_per_param * width / g.col["hbm_bytes_per_s"]


# training state in bytes per parameter a GPU holds whole and per parameter of its ZeRO shard,
# by ZeRO stage: mixed precision (bf16 weights; fp32 gradients, Adam moments and master
# weights), and with ``bf16_weights`` (all four in BF16, no master copy)
STATE_BYTES: dict[bool, dict[int, tuple[float, float]]] = {
    False: {0: (18.0, 0.0), 1: (6.0, 12.0), 2: (2.0, 16.0), 3: (0.0, 16.0)},
    True: {0: (8.0, 0.0), 1: (4.0, 4.0), 2: (2.0, 6.0), 3: (0.0, 8.0)},
}


def _memory(workload: Workload, g: _Grid, c: ModelConstants, params: _Parameters) -> Array:
    """Bytes per GPU (4.8): bf16 weights, fp32 gradients, fp32 Adam states and master
    weights (2 + 4 + 12 bytes per parameter, as Megatron-LM keeps its main gradients in fp32
    for bf16 training), each ZeRO stage sharding more of them; FSDP (stage 3) keeps fp32
    sharded parameters as the master copy (4 + 4 + 8); activations of the first stage. With
    ``bf16_weights`` the weights, gradients and both Adam moments are BF16 (2 + 2 + 4), no
    master copy: NeMo AutoModel's models, built in BF16 (``from_config``: "If 'auto',
    defaults to torch.bfloat16"; train_ft.py @cb9765441e51: "fp32 master-weight default
    planned to be enabled in follow-up PR"), whose FSDP2 shards are the parameters
    themselves."""
    t, p, b, v, m, rc, share = g.t, g.p, g.b, g.v, g.m, g.rc, g.share
    s, h = workload.seq_len / g.cp, workload.hidden_size  # CP: each rank holds s / cp tokens
    if workload.lora is not None:
        # the frozen base in bf16, sharded with everything else under FSDP (stage 3); the
        # adapters' whole training state, a fully sharded parameter's (stage 3's per shard)
        base = params.sharded if workload.zero_stage == 3 else params.here
        states = 2.0 * base + STATE_BYTES[workload.bf16_weights][3][1] * params.lora
    else:
        whole, sharded = STATE_BYTES[workload.bf16_weights][workload.zero_stage]
        states = whole * params.here + sharded * params.sharded
    heads = workload.heads
    kept = workload.activation_bytes_per_token_width  # 34 for GPT-3 with dropout
    # the attention scores (softmax output 2 a s^2 b; with dropout also its 1-byte mask and
    # its 2-byte output) are what selective recompute drops; Flash never stores them
    scores = 0.0 if workload.flash_attention else (5.0 if workload.dropout else 2.0) * heads * s / h
    per_layer = np.select(
        [rc == 0, rc == 1],
        [s * b * h * (kept + scores) / t, kept * s * b * h / t],
        # block recompute: the covered layers keep their input only, the others everything
        (share * 2.0 + (1.0 - share) * (kept + scores)) * s * b * h / t,
    )
    # micro-batches whose activations stage 0 holds at once: p under 1F1B; interleaved,
    # Megatron's warm-up of 2(p-1) + (v-1)p chunks plus the one in flight, i.e. p + (p-1)/v
    # stages' worth (Korthikanti's 1 + (p-1)/(pv) factor), but never more than the m
    # micro-batches there are
    chunks = np.minimum(m * v, 2.0 * (p - 1) + (v - 1) * p + 1)
    in_flight = np.where(v > 1, chunks / v, np.minimum(p, m))
    # the logits (fp32 for the loss) live on the last stage; the first holds more unless one
    # stage holds the whole model
    logits = np.where(p > 1, 0.0, 4.0 * s * b * workload.vocab_size / t)
    # multi-token prediction's depths sit on the last stage too: each a layer's activations
    # and its own logits
    mtp = np.where(p > 1, 0.0, workload.mtp_layers * (per_layer * in_flight + logits))
    activations = g.activation_layers * per_layer * in_flight + logits + mtp
    return states + activations + c.buffer_bytes


def _goodput(n: Array, c: ModelConstants) -> Array:
    """Failures (4.9): Young's checkpoint interval and its first-order waste."""
    mtbf_h = c.gpu_hours_per_interruption / n
    interval_s = np.sqrt(2.0 * c.checkpoint_s * mtbf_h * 3600.0)
    waste = (
        c.checkpoint_s / interval_s
        + interval_s / (2.0 * mtbf_h * 3600.0)
        + c.restart_s / (mtbf_h * 3600.0)
    )
    return np.clip(1.0 - waste, 0.05, 1.0)


@dataclass(frozen=True)
class _Terms:
    """Every term of a step over the (profile, layout) grid: the parts (seconds per step,
    keyed by their ``STEP_PARTS`` field) and what choosing and reporting a layout needs."""

    parts: dict[str, Array]
    step: Array  # the parts' sum, seconds per step
    dp_raw: Array  # the whole data-parallel sync, before the overlap hides part of it
    ep_fabric: Array  # the expert-parallel traffic that crosses the fabric
    cp_fabric: Array  # the context-parallel traffic that crosses the fabric
    memory: Array  # bytes per GPU
    fits: NDArray[np.bool_]
    valid: NDArray[np.bool_]


def _terms(workload: Workload, g: _Grid, c: ModelConstants) -> _Terms:
    """One pure function per term, each over the (profile, layout) grid."""
    p, v = g.p, g.v
    computed = _compute(workload, g, c)
    compute = computed.time
    # the collectives per layer, like the compute, wait on the heaviest stage
    tp_time = _tp_comm(workload, g, c) * g.imbalance
    pp_time = _pp_comm(workload, g, c)
    params = _parameters(workload, g)
    dp_time, dp_exposed = _dp_comm(workload, g, c, params, compute)
    ep_time, ep_fabric = _ep_comm(workload, g, c, params.ep, compute)
    ep_time, ep_fabric = ep_time * g.imbalance, ep_fabric * g.imbalance
    cp_time, cp_fabric = _cp_comm(workload, g, c, computed.attention)
    bubble = (p - 1) / (v * g.m) * compute  # (4.6)
    optimizer = _optimizer(workload, g, c, params)
    # the parts' sum, written out in the order the constants were fitted with (summing the
    # parts below in their display order could move a tie between layouts by a rounding)
    step = (
        compute * (1.0 + c.overlap_sm_contention)
        + bubble
        + tp_time
        + pp_time
        + ep_time
        + cp_time
        + dp_exposed
        + optimizer
    )
    memory = _memory(workload, g, c, params)
    parts = {
        "compute_s": compute,
        "overlap_contention_s": compute * c.overlap_sm_contention,
        "tp_comm_s": tp_time,
        "pp_comm_s": pp_time,
        "cp_comm_s": cp_time,
        "dp_comm_exposed_s": dp_exposed,
        "ep_comm_s": ep_time,
        "bubble_s": bubble,
        "optimizer_s": optimizer,
    }
    assert list(parts) == [part.field for part in STEP_PARTS]
    return _Terms(
        parts=parts,
        step=step,
        dp_raw=dp_time,
        ep_fabric=ep_fabric,
        cp_fabric=cp_fabric,
        memory=memory,
        fits=memory <= g.col["hbm_bytes"] * (1.0 - c.memory_headroom),
        valid=_valid(workload, g),
    )


@dataclass(frozen=True)
class _Choice:
    """Per profile, the layout chosen (``pick``), whether one was found and whether it fits."""

    pick: NDArray[np.int64]
    found: NDArray[np.bool_]
    fits: NDArray[np.bool_]
    shape: tuple[int, ...]

    def __call__(self, values: Array) -> Array:
        """``values`` over the grid, at each profile's chosen layout."""
        full = np.broadcast_to(values, self.shape)
        return np.asarray(full[np.arange(len(self.pick)), self.pick], dtype=np.float64)


def _choose(terms: _Terms, g: _Grid, given: bool) -> _Choice:
    """Choose, per profile, among the valid layouts that fit: those that run the batch nearest
    the workload's (its own when one divides it), the fastest per token of them. A given
    layout's unstated parts are searched among the choices that fit; when none does, the given
    layout is still estimated (and reported as not fitting). Where nothing is found, the
    smallest-memory valid layout is reported so the user sees why."""
    step, valid, fits = terms.step, terms.valid, terms.fits
    batch_scale = np.broadcast_to(g.batch_scale, step.shape)
    gap = np.abs(batch_scale - 1.0)
    per_token = step / batch_scale

    def nearest(allowed: NDArray[np.bool_]) -> Array:
        closest = np.min(np.where(allowed, gap, np.inf), axis=1, keepdims=True)
        return np.where(allowed & (gap <= closest + 1e-9), per_token, np.inf)

    fitting = nearest(valid & fits)
    if given:
        any_fits = np.isfinite(fitting).any(axis=1, keepdims=True)
        candidate = np.where(any_fits, fitting, nearest(np.asarray(valid)))
    else:
        candidate = fitting
    rows = np.arange(candidate.shape[0])
    best = np.argmin(candidate, axis=1)
    found = np.isfinite(candidate[rows, best])
    fits_chosen = np.asarray(np.broadcast_to(fits, candidate.shape)[rows, best])
    fallback = np.argmin(np.where(valid, terms.memory, np.inf), axis=1)
    return _Choice(
        pick=np.where(found, best, fallback),
        found=found,
        fits=fits_chosen,
        shape=candidate.shape,
    )


def estimate(
    workload: Workload,
    hw: HardwareProfiles,
    layout: LayoutGrid | None = None,
    constants: ModelConstants | None = None,
) -> Estimate:
    """Estimate ``workload`` on every profile of ``hw``; search layouts unless one is given.

    Three steps: the terms (:func:`_terms`: compute, the TP, PP, CP, DP and EP collectives,
    bubble, optimizer, memory, each over the (profile, layout) grid), the choice of a layout
    per profile (:func:`_choose`), and the estimate assembled from the chosen layout's terms
    (:func:`_assemble`), where failures turn its step time into time-to-train.
    """
    c = constants or ModelConstants()
    if layout is None:
        layout = LayoutGrid.search(workload, int(np.max(hw.nvlink_domain_gpus)))
    g = _grid(workload, hw, layout, c)
    terms = _terms(workload, g, c)
    return _assemble(workload, hw, layout, g, terms, _choose(terms, g, layout.given), c)


def _assemble(
    workload: Workload,
    hw: HardwareProfiles,
    layout: LayoutGrid,
    g: _Grid,
    terms: _Terms,
    chosen: _Choice,
    c: ModelConstants,
) -> Estimate:
    """The estimate of each profile's chosen layout: its step's parts, time and cost, MFU,
    the verdict and where the exposed communication runs."""
    found, pick = chosen.found, chosen.pick
    step_s = np.where(found, chosen(terms.step), np.nan)
    scale = chosen(g.batch_scale)
    model_flops_step = _model_flops_step(workload) * scale
    tokens_step = workload.batch_tokens * scale
    part = {name: chosen(values) for name, values in terms.parts.items()}
    compute_s, bubble_s = part["compute_s"], part["bubble_s"]
    tp_s, pp_s, ep_s, cp_s = (
        part["tp_comm_s"],
        part["pp_comm_s"],
        part["ep_comm_s"],
        part["cp_comm_s"],
    )
    dp_exp, opt_s = part["dp_comm_exposed_s"], part["optimizer_s"]
    dp_raw = chosen(terms.dp_raw)
    n = hw.gpu_count

    goodput = _goodput(n, c)

    exposed = tp_s + pp_s + ep_s + cp_s + dp_exp
    fabric_part = (
        np.where(hw.nodes > 1, pp_s + dp_exp, 0.0)
        + chosen(terms.ep_fabric)
        + chosen(terms.cp_fabric)
    )
    tokens_per_s = tokens_step / step_s
    rented = np.ceil(n / hw.gpus_per_node) * hw.gpus_per_node
    train_s = workload.tokens / tokens_step * step_s / goodput
    comm_fraction = exposed / step_s
    verdict = [
        "unknown"
        if not np.isfinite(f)
        else "communication-bound"
        if f > c.communication_bound_from or r > 1.0
        else "balanced"
        if f >= c.balanced_from
        else "compute-bound"
        for f, r in zip(
            comm_fraction, (tp_s + pp_s + ep_s + cp_s + dp_raw) / compute_s, strict=True
        )
    ]
    fabric_share = np.where(exposed > 0, fabric_part / np.maximum(exposed, 1e-12), 0.0)
    stages = [tuple(int(n) for n in plan) for plan in g.stage_plans[pick]]
    comm_link = [
        "none" if not e > 0 else "fabric" if f >= 0.5 else "nvlink"
        for e, f in zip(exposed, fabric_share, strict=True)
    ]
    t, p, b, v, dp, valid, memory = g.t, g.p, g.b, g.v, g.dp, terms.valid, terms.memory
    return Estimate(
        step_time_s=step_s,
        compute_s=compute_s,
        overlap_contention_s=part["overlap_contention_s"],
        tp_comm_s=tp_s,
        pp_comm_s=pp_s,
        dp_comm_exposed_s=dp_exp,
        ep_comm_s=ep_s,
        bubble_s=bubble_s,
        cp_comm_s=cp_s,
        optimizer_s=opt_s,
        failure_overhead_s=step_s * (1.0 / goodput - 1.0),
        tokens_per_s=tokens_per_s,
        tflops_per_gpu=model_flops_step / step_s / n / 1e12,
        mfu=model_flops_step / step_s / (n * _peak(workload, hw)),
        goodput=goodput,
        time_to_train_h=train_s / 3600.0,
        gpu_hours=rented * train_s / 3600.0,
        comm_fraction_exposed=comm_fraction,
        comm_to_compute_raw=(tp_s + pp_s + ep_s + cp_s + dp_raw) / compute_s,
        fabric_share_of_comm=fabric_share,
        memory_gb_per_gpu=chosen(memory) / GIB,
        fits_memory=found & chosen.fits,
        tp=chosen(t),
        pp=chosen(p),
        dp=chosen(dp),
        micro_batch=chosen(b),
        virtual_stages=chosen(v),
        cp=chosen(g.cp),
        first_stage_layers=g.stage_plans[pick, 0],
        last_stage_layers=g.stage_plans[pick, 2],
        stages=[
            stage_label(int(layout.pp[k]), *plan) for k, plan in zip(pick, stages, strict=True)
        ],
        batch_sequences=workload.batch_sequences * scale,
        layout_found=np.asarray(np.any(valid, axis=1)),
        recompute=[
            _recompute_label(int(i), float(f))
            for i, f in zip(layout.recompute[pick], layout.recompute_share[pick], strict=True)
        ],
        verdict=verdict,
        comm_link=comm_link,
    )
