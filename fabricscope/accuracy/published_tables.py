"""NVIDIA's published throughput tables as calibration cases: NeMo 24.07's H100 FP8 table, one
of the families the constants are fitted on (:func:`calibration_set`), and Megatron-Bridge's
25.09-26.06 tables, NeMo AutoModel's H100 table and NeMo's long-sequence table (its TFLOP/s
converted to tokens/s with NeMo's own FLOPs count), which no constant is fitted on: the blind
check.

Only rows the model can represent become cases, each with the assumptions it needed; every
other row is skipped with its reason (FP4, a model without a named architecture, a cell
holding two measurements). Pure: reads the recorded CSVs, no network.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from fabricscope.accuracy.validation import CalibrationCase, SkippedRow, map_rows
from fabricscope.model.scaling import LayoutGrid
from fabricscope.model.workload import (
    Dispatcher,
    Fp8Recipe,
    LoRA,
    Precision,
    Recompute,
    Stack,
    Workload,
)
from fabricscope.model.workloads import architectures

PUBLISHED = Path(__file__).resolve().parents[2] / "fixtures" / "published_runs"
MEGATRON_BRIDGE = PUBLISHED / "megatron_bridge_performance_summary_archive.csv"
NEMO_2407 = PUBLISHED / "nemo_performance_summary_24.07.csv"
AUTOMODEL = PUBLISHED / "automodel_performance_summary.csv"
# Megatron-Bridge's performance configurations as each release shipped them, one line per
# configuration with the settings it ends with (transcribed from each release's scripts/
# performance at the tag its documents name; published_runs_calibration.md)
MEGATRON_BRIDGE_RECIPES = PUBLISHED / "megatron_bridge_release_recipes.csv"
FAMILY = "megatron_bridge"


@dataclass(frozen=True)
class ListedConfiguration:
    """A benchmark configuration a table lists for one of its rows: where it is and what it
    states that the row does not print (its activation recompute; its expert-parallel size
    where the row prints none)."""

    source: str
    recompute: Recompute
    expert_parallel: int | None = None


@dataclass(frozen=True)
class Table:
    """How one recorded table's rows read: its family, model names and precision."""

    family: str
    path: Path
    run_prefix: str
    # the table's model names whose architecture is named (fabricscope/model/presets, with its
    # source)
    architecture_of: dict[str, str]
    # the row's precision label, or "" where the table prints none
    precision_of: Callable[[dict[str, str]], str]
    # why a model outside architecture_of is left out, by the start of its name
    unmapped: dict[str, str]
    # the DGX system the row ran on (a key of SYSTEMS, or what the table prints)
    system_of: Callable[[dict[str, str]], str] = lambda row: (
        row.get("system") or row["system_from_heading"]
    )
    sequence_column: str = "sequence_length"
    # the column stating the micro-batch size, or None where the table states none (searched)
    micro_batch_column: str | None = "mbs"
    # the software stack the table's runs used, and what the table says of it ("" if nothing);
    # stack_of reads it per row where the table's rows differ
    stack: Stack = Stack.MEGATRON
    stack_note: str = ""
    stack_of: Callable[[dict[str, str]], Stack] | None = None
    # the column stating activation recompute (none, selective, full), if the table has one
    recompute_column: str | None = None
    # the adapters of the table's LoRA rows by model name, with the activation recompute
    # their configuration states (None: not stated, searched), and their source: a model's
    # LoRA row is scored only where its benchmark configuration is read
    lora_of: dict[str, tuple[LoRA, Recompute | None]] = field(default_factory=dict)
    lora_note: str = ""
    # why the table's runs keep their weights, gradients and Adam's moments in BF16 with no
    # FP32 master copy (Workload.bf16_weights); "" where they keep FP32 master weights
    bf16_weights_note: str = ""
    # the benchmark configuration a pre-training row ran, by model name and GPU count, where
    # the table lists it (the rest: recompute searched, EP from the row)
    configuration_of: dict[tuple[str, int], ListedConfiguration] = field(default_factory=dict)
    # why the table's fine-tuning rows are not scored ("": they are)
    fine_tuning_gap: str = ""
    # the FP8 recipe a plain "FP8" label stands for in this table, and why
    plain_fp8: tuple[Fp8Recipe, str] = (Fp8Recipe.TENSORWISE, "not stated: per-tensor assumed")
    # multi-token prediction depths a model's rows ran where they differ from its
    # architecture's (none unless given), with the source that says so
    mtp_of: dict[str, tuple[int, str]] = field(default_factory=dict)
    # the benchmark configurations, by release, whose settings (recompute, overlaps) a row of
    # the same release and layout ran with (:func:`benchmark_recipes`), or None where the
    # table's configurations are not read
    recipes: Path | None = None
    # the MoE token dispatcher a row states (None: not stated, NCCL's all-to-all assumed)
    dispatcher_of: Callable[[dict[str, str]], Dispatcher | None] = lambda row: None

    def why_unmapped(self, model: str) -> str:
        for start, reason in self.unmapped.items():
            if model.startswith(start):
                return f"{model}: {reason}"
        return f"{model}: no named architecture"


# Megatron-Bridge's token-drop rows (--use_tokendrop) cap each expert's tokens at capacity
# factor 1.0 and pad every expert's input to it (training/utils/moe_token_drop.py
# apply_moe_token_drop defaults, @067f987df03b): each expert computes exactly the balanced
# share the model's routing assumes
TOKEN_DROP = (
    "token dropping: capacity factor 1.0 with every expert's input padded to it "
    "(Megatron-Bridge apply_moe_token_drop @067f987df03b), so each expert runs the balanced "
    "share the model assumes"
)
MEGATRON_BRIDGE_TABLE = Table(
    family=FAMILY,
    path=MEGATRON_BRIDGE,
    run_prefix="mbridge",
    architecture_of={
        "LLAMA3_8B": "llama3-8b",
        "LLAMA3_70B": "llama3-70b",
        "LLAMA3.1_405B": "llama3-405b",
        # DeepSeek-V3 by its preset's architecture (MLA's core attention at its heads'
        # widths); the row that says it adds multi-token prediction with its one depth (mtp_of)
        "DeepSeekV3": "deepseek-v3",
        "DeepSeekV3 (w/o MTP)": "deepseek-v3",
        "DeepSeekV3 (w/ MTP)": "deepseek-v3",
        "DeepSeekV3 (dropless)": "deepseek-v3",
        "DeepSeekV3 (tokendrop)": "deepseek-v3",
        "Qwen3_30B_a3B (tokendrop)": "qwen3-30b-a3b",
        "Qwen3_235B_a22B (tokendrop)": "qwen3-235b-a22b",
        "Qwen3_30B_a3B": "qwen3-30b-a3b",
        "Qwen3_235B_a22B": "qwen3-235b-a22b",
        "Kimi_K2": "kimi-k2",
        # its sliding window on every other layer modelled (Workload.attention_window); its
        # attention sinks not (the architecture's source says so)
        "GPT OSS 120B": "gpt-oss-120b",
        # hybrid Mamba-Transformer: its Mamba-2 layers modelled (Workload.mamba)
        "Nemotron_3_Nano": "nemotron-3-nano",
        # LatentMoE and multi-token prediction (2 depths of one shared block) modelled
        "Nemotron_3_Super": "nemotron-3-super",
    },
    precision_of=lambda row: (row["precision"] or "").strip(),
    # the performance scripts' PEFT task runs the recipe's peft config: rank 16 on Llama 3 70B
    # (recipes/llama/h100/llama3.py llama3_70b_peft_8gpu_h100_bf16_config: "70B uses dim=16"),
    # on the LoRA defaults' four linear layers: linear_qkv, linear_proj, linear_fc1,
    # linear_fc2 (src/megatron/bridge/peft/lora.py), both @067f987df03b
    lora_of={"LLAMA3_70B": (LoRA(rank=16, matrices_per_layer=4), None)},
    lora_note=(
        "LoRA rank 16 on linear_qkv, linear_proj, linear_fc1 and linear_fc2 (Megatron-Bridge "
        "llama3_70b_peft config and peft/lora.py defaults @067f987df03b)"
    ),
    plain_fp8=(
        Fp8Recipe.TENSORWISE,
        "Megatron-Bridge's performance recipes offer bf16, fp8_cs, fp8_mx, fp8_sc and nvfp4 "
        "(scripts/performance/argument_parser.py @067f987df03b) and run H100, which has no MX "
        "tensor cores, as fp8_cs (dump_perf_configs.py): current scaling",
    ),
    unmapped={},
    recipes=MEGATRON_BRIDGE_RECIPES,
    mtp_of={
        "Nemotron_3_Super": (
            2,
            "multi-token prediction: 2 depths of one shared attention + MoE block (recipes/"
            "nemotronh/h100/nemotron_3_super.py @067f987df03b: mtp_num_layers 2, "
            "mtp_use_repeated_layer); the recipe keeps the block in BF16 (keep_mtp_spec_in_bf16): "
            "costed at the row's precision",
        ),
        "DeepSeekV3 (w/ MTP)": (
            1,
            "multi-token prediction depth 1, as DeepSeek-V3 trained (arXiv:2412.19437 section "
            "4.2: 'we set the MTP depth D to 1'); its weights beyond the preset's stated 671B "
            "not added; its block counted in the step's FLOPs, not on the last pipeline stage",
        ),
    },
)


def _stated_fp8(row: dict[str, str]) -> str:
    """NeMo 24.07 states the precision once, above its pre-training table."""
    return "FP8" if "at FP8 precision" in row["table_context_before"] else ""


NEMO_2407_TABLE = Table(
    family="nemo2407",
    path=NEMO_2407,
    run_prefix="nemo2407",
    architecture_of={
        "GPT3-5B": "gpt3-5b",
        "GPT3-20B": "gpt3-20b",
        "GPT3-175B": "gpt3-175b",
        "LLAMA2-7B": "llama2-7b",
        "LLAMA2-13B": "llama2-13b",
        "LLAMA2-70B": "llama2-70b",
        "LLAMA3-8B": "llama3-8b",
        "LLAMA3-70B": "llama3-70b",
        "Nemotron-8B": "nemotron3-8b",
        "Nemotron-22B": "nemotron3-22b",
        "Nemotron-340B": "nemotron4-340b",
    },
    precision_of=_stated_fp8,
    unmapped={},
    # its fine-tuning rows pack SQuAD samples into 4,096-token inputs (the table's note), whose
    # attention stays inside each sample: the model's causal attention over the whole input
    # would overcount it, and the LoRA rows' adapters are not stated
    fine_tuning_gap=(
        "fine-tuning on packed SQuAD inputs (attention within each sample) and unstated LoRA "
        "adapters: not scored"
    ),
    plain_fp8=(
        Fp8Recipe.DELAYED,
        "NeMo 24.07 ran Transformer Engine 1.x, whose Common API lists DelayedScaling as its "
        "only recipe (release 1.3 docs; current, MX and block scaling came with 2.x)",
    ),
)


def _automodel_heading(row: dict[str, str]) -> tuple[str, str]:
    """AutoModel states system and precision in its table's heading: "DGX-H100, Precision:
    BF16"."""
    system, _, precision = row["system_from_heading"].partition(", Precision:")
    return system.strip(), precision.strip()


def _automodel_listed(
    path: str, recompute: Recompute, expert_parallel: int | None = None
) -> ListedConfiguration:
    """One of the benchmark configurations NeMo AutoModel's table lists, read at the table's
    own commit."""
    return ListedConfiguration(
        f"examples/llm_benchmark/{path} @cb9765441e51", recompute, expert_parallel
    )


def _automodel_at_run(
    path: str, commit: str, recompute: Recompute, expert_parallel: int | None = None
) -> ListedConfiguration:
    """A benchmark configuration as it stood when the row's figures were published (or at
    the first later commit whose configuration has the row's batch, PP and EP), where it has
    changed since: the table's row is that run's, not a later configuration's."""
    return ListedConfiguration(
        f"examples/benchmark/configs/{path} @{commit}", recompute, expert_parallel
    )


AUTOMODEL_TABLE = Table(
    family="automodel",
    path=AUTOMODEL,
    run_prefix="automodel",
    architecture_of={
        "Llama3 70B": "llama3-70b",
        # its LoRA rows: Llama 3.1 8B and Llama 3.3 70B Instruct, the shapes of Llama 3 8B and
        # 70B; the 70B on two nodes is the same model
        "Llama3 8B": "llama3-8b",
        "Llama3 70B 2-node": "llama3-70b",
        # Qwen/Qwen2.5-7B and Qwen2.5-32B-Instruct, the 32B's instruct tune being its shape
        "Qwen2.5 7B": "qwen2.5-7b",
        "Qwen2.5 32B": "qwen2.5-32b",
        "Qwen2.5 32B 2-node": "qwen2.5-32b",
        "DeepSeek V3 671B": "deepseek-v3",
        "Qwen3 MoE 30B": "qwen3-30b-a3b",
        "Kimi K2": "kimi-k2",
        "GPT-OSS 20B": "gpt-oss-20b",
        "GPT-OSS 120B": "gpt-oss-120b",
        "Nemotron V3 Nano 30B (26.02)": "nemotron-3-nano",
        "Nemotron V3 Super 120B (26.02)": "nemotron-3-super",
        "Nemotron V3 Ultra 550B (26.04)": "nemotron-3-ultra",
    },
    precision_of=lambda row: _automodel_heading(row)[1],
    unmapped={},
    # release 26.02's run predates AutoModel's multi-token prediction for Nemotron 3
    # (nemo_automodel/components/models/nemotron_v3/mtp.py, added 2026-05-13 in #2161), and
    # its benchmark configuration sets none (nemotron_super_v3_te_deepep.yaml @36044ad3d139)
    mtp_of={
        "Nemotron V3 Super 120B (26.02)": (
            0,
            "no multi-token prediction: release 26.02 predates NeMo AutoModel's (nemotron_v3/"
            "mtp.py, added 2026-05-13) and its benchmark configuration sets none",
        )
    },
    system_of=lambda row: _automodel_heading(row)[0],
    sequence_column="seq_length",
    # the kernel_optimizations column names DeepEP on every MoE row ("TE + DeepEP")
    dispatcher_of=lambda row: (
        Dispatcher.DEEPEP if "deepep" in row["kernel_optimizations"].lower() else None
    ),
    stack=Stack.FSDP,
    stack_note=(
        "software stack: NeMo AutoModel (PyTorch-native FSDP2 with Transformer Engine "
        "kernels, the table's kernel_optimizations column): costed as stack fsdp"
    ),
    # its benchmark configurations build the model in BF16 (torch_dtype: bf16, or from_config's
    # default) and train it with torch.optim.Adam, whose moments take the parameter's dtype
    bf16_weights_note=(
        "weights, gradients and Adam's moments in BF16, no FP32 master copy: NeMo AutoModel "
        "builds the model in BF16 (the benchmark configurations' torch_dtype: bf16, or the "
        "default 'auto': from_config's BF16, from_pretrained's the checkpoint's; nemo_automodel/"
        "_transformers/auto_model.py @cb9765441e51; "
        "recipes/llm/train_ft.py: 'fp32 master-weight default planned to be enabled in "
        "follow-up PR')"
    ),
    # the LoRA benchmark configurations the table links (examples/llm_benchmark/llama3_1/
    # llama3_1_8b_peft_benchmark.yaml, llama3_3/custom_llama3_3_70b_instruct_peft_benchmark
    # .yaml and its _2nodes twin; qwen/qwen2_5_7b_peft_benchmark.yaml, qwen/custom_qwen2_5_32b_
    # peft_benchmark.yaml and its _2nodes twin @36044ad3d139): rank 16 on target_modules
    # '*_proj', the seven projections q, k, v, o, gate, up and down of every layer; the 70B's
    # and the 32B's set activation_checkpointing: true, which checkpoints every block (full
    # recompute: only the string "selective" selects the selective kind, components/
    # distributed/activation_checkpointing.py); the 8B's and the 7B's say nothing of it
    lora_of={
        "Llama3 8B": (LoRA(rank=16, matrices_per_layer=7), None),
        "Llama3 70B": (LoRA(rank=16, matrices_per_layer=7), Recompute.FULL),
        "Llama3 70B 2-node": (LoRA(rank=16, matrices_per_layer=7), Recompute.FULL),
        "Qwen2.5 7B": (LoRA(rank=16, matrices_per_layer=7), None),
        "Qwen2.5 32B": (LoRA(rank=16, matrices_per_layer=7), Recompute.FULL),
        "Qwen2.5 32B 2-node": (LoRA(rank=16, matrices_per_layer=7), Recompute.FULL),
    },
    lora_note=(
        "LoRA rank 16 on the seven *_proj matrices of every layer (NeMo AutoModel's "
        "llm_benchmark peft configurations @36044ad3d139)"
    ),
    # the pre-training configurations the table lists, at the table's own commit
    # (examples/llm_benchmark/ @cb9765441e51, each with the row's batch, PP and EP): every one
    # sets distributed.activation_checkpointing: true, which wraps every transformer block
    # (and MTP block) in a checkpoint (components/moe/parallelizer.py apply_ac; the dense
    # FSDP2 path alike, components/distributed/config.py: "True keeps the existing full
    # activation checkpointing behavior"): full recompute. Three rows are older than their
    # configuration's present form and are read as their run stood: the table published
    # DeepSeek-V3's 1,024-GPU row and both GPT-OSS rows on 2025-10-06 (#562, 89e3a9fdd), when
    # the 20B's configuration (the row's batch 256, local batch 2, EP 8, FlexAttention) set
    # activation_checkpointing: true (until 2025-11-10, 8df18da35); the 1,024-GPU DeepSeek
    # configuration and a GPT-OSS-120B one with the row's shape (batch 512, local batch 2,
    # PP 1, EP 64, FlexAttention, no checkpointing) came two days later (#574, 2c236e081),
    # the DeepSeek one with activation_checkpointing: true (later dropped). The GPT-OSS rows
    # print "-" for EP: the configurations' ep_size
    configuration_of={
        ("Nemotron V3 Super 120B (26.02)", 64): _automodel_listed(
            "nemotron/nemotron_super_v3_te_deepep.yaml", Recompute.FULL
        ),
        # added with the row (#2539): EP 64, local batch 2, torch._grouped_mm experts, the
        # repeated MTP head at 2 depths (the architecture's), activation_checkpointing: true
        ("Nemotron V3 Ultra 550B (26.04)", 128): _automodel_listed(
            "nemotron/nemotron_ultra_v3_te_deepep.yaml", Recompute.FULL
        ),
        ("Nemotron V3 Nano 30B (26.02)", 8): _automodel_listed(
            "nemotron/nemotron_nano_v3_te_deepep.yaml", Recompute.FULL
        ),
        ("DeepSeek V3 671B", 256): _automodel_listed(
            "deepseek/deepseek_v3_te_deepep.yaml", Recompute.FULL
        ),
        ("DeepSeek V3 671B", 1024): _automodel_at_run(
            "deepseek_v3_te_deepep_1024.yaml", "2c236e081e49", Recompute.FULL
        ),
        ("Kimi K2", 256): _automodel_listed("kimi/kimi_k2_te_deepep.yaml", Recompute.FULL),
        ("Qwen3 MoE 30B", 8): _automodel_listed(
            "qwen/qwen3_moe_30b_te_deepep.yaml", Recompute.FULL
        ),
        ("Llama3 70B", 64): _automodel_listed(
            "llama3_3/custom_llama3_1_70b_pretrain_benchmark_8nodes.yaml", Recompute.FULL
        ),
        ("GPT-OSS 20B", 8): _automodel_at_run(
            "gptoss_20b_te_deepep.yaml", "89e3a9fdd604", Recompute.FULL, expert_parallel=8
        ),
        ("GPT-OSS 120B", 64): _automodel_at_run(
            "gptoss_120b_te_deepep.yaml", "2c236e081e49", Recompute.NONE, expert_parallel=64
        ),
    },
)


TORCHTITAN = PUBLISHED / "torchtitan_benchmarks.csv"
TORCHTITAN_TABLE = Table(
    family="torchtitan",
    path=TORCHTITAN,
    run_prefix="torchtitan",
    architecture_of={"Llama 3.1 8B": "llama3-8b"},
    precision_of=lambda row: row["precision"],
    unmapped={},
    system_of=lambda row: row["system"],
    stack=Stack.FSDP,
    stack_of=lambda row: Stack.FSDP if row["compile"] == "true" else Stack.EAGER,
    recompute_column="activation_checkpoint",
    plain_fp8=(
        Fp8Recipe.TENSORWISE,
        "torchao's tensorwise dynamic scaling: the runs' precompute_float8_dynamic_scale_for_fsdp",
    ),
    stack_note=(
        "software stack: torchtitan (PyTorch FSDP2; torch.compile as the row says: fsdp "
        "compiled, eager without); Float8 linears (torchao, tensorwise scaling) as FP8 GEMMs; "
        "selective checkpointing is torchtitan's per-op policy, modelled as selective recompute"
    ),
)


NEMO_LONG_SEQUENCE = PUBLISHED / "nemo_performance_long_sequence.csv"
# the same table's earlier printing of its DGX B200 rows (@14d427f575ee): each row's TP, CP and
# DP and TFLOP/s as the later printing has them, with GPU counts that are their product
NEMO_LONG_SEQUENCE_EARLIER = PUBLISHED / "nemo_performance_long_sequence_superseded_rows.csv"
# NeMo's long-sequence table names its model and precision in each table's heading ("LLAMA2-7B
# (FP8) - H100"), prints TFLOP/s per GPU, not tokens/s, and states the with-CP layout as TP, PP,
# DP and CP with no micro-batch: its rows are read by nemo_long_sequence_cases
NEMO_LONG_SEQUENCE_TABLE = Table(
    family="nemo_long_sequence",
    path=NEMO_LONG_SEQUENCE,
    run_prefix="nemolongseq",
    architecture_of={"LLAMA2-7B": "llama2-7b", "LLAMA3-8B": "llama3-8b"},
    precision_of=lambda row: "FP8" if "(FP8)" in row["section"] else "",
    unmapped={},
    micro_batch_column=None,
    plain_fp8=(
        Fp8Recipe.DELAYED,
        "NeMo 24.03.01 ran Transformer Engine 1.x, as NeMo 24.07 after it did, whose Common API "
        "lists DelayedScaling as its only recipe (release 1.3 docs; NeMo r1.23.0's Dockerfile "
        "builds Transformer Engine 1.2.0, @e772dbf531); NeMo 25.04's FP8 mixed precision "
        "defaults to delayed scaling too (nemo/collections/llm/recipes/precision/"
        "mixed_precision.py bf16_with_fp8_mixed: fp8_recipe 'delayed', @19fadb67b09b)",
    ),
)
# NeMo's own count of a Llama's model FLOPs, with which its TFLOP/s are computed: per token
# l h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(l h)), attention counted non-causal
# (nemo/utils/flops_formulas.py llama2 and llama3 @19fadb67b09b, the long-sequence table's
# commit; the same expression in nemo/collections/common/metrics/perf_metrics.py _llama2 and
# _llama3 @d8995496ac65, 2024-08-04, before the table's H100 rows were first published on
# 2024-10-18 @5b47a94c110e). V is NeMo's LLM_VOCAB_SIZE_MAP's, not the model's
# (nemo/collections/common/parts/perf_metrics_utils.py, same commits)
NEMO_FLOPS_VOCAB = {"llama2-7b": 32000, "llama3-8b": 128256}
NEMO_FLOPS_FORMULA = (
    "NeMo's Llama FLOPs per token l h^2 (12 + 12 g/a + 18 f/h + 12 s/h + 6 V/(l h)) (layers l, "
    "hidden h, heads a, query groups g, FFN f, sequence s, NeMo's vocabulary V; attention "
    "counted non-causal): nemo/utils/flops_formulas.py llama2/llama3 @19fadb67b09b and "
    "nemo/collections/common/metrics/perf_metrics.py @d8995496ac65"
)
# the table's "without CP" figures ran "the most performant model- and data-parallel
# configurations without CP", which it does not print
WITHOUT_CP_GAP = (
    "the table's without-CP figure not scored: its layout is not printed (the table: 'the most "
    "performant model- and data-parallel configurations without CP')"
)


def nemo_llama_flops_per_token(shape: str, seq_len: int) -> float:
    """NeMo's model FLOPs per token of a Llama architecture at ``seq_len`` (NEMO_FLOPS_FORMULA),
    the count its published TFLOP/s divide by."""
    fields = architectures()[shape]["fields"]
    layers, hidden, heads = fields["layers"], fields["hidden_size"], fields["heads"]
    groups = fields.get("kv_heads") or heads
    vocab = NEMO_FLOPS_VOCAB[shape]
    return float(
        layers
        * hidden
        * hidden
        * (
            12
            + 12 * groups / heads
            + 18 * fields["ffn_size"] / hidden
            + 12 * seq_len / hidden
            + 6 * vocab / (layers * hidden)
        )
    )


# The tables name a DGX system, never its network. The fabric is the system's reference design,
# an assumption each case records: DGX H100 and DGX B200 carry one 400 Gb/s ConnectX-7
# InfiniBand NIC per GPU; a DGX GB200 / GB300 is an NVL72 rack (72 GPUs in one NVLink domain,
# 4 per compute tray) with one 400 Gb/s ConnectX-7 (GB200) or 800 Gb/s ConnectX-8 (GB300) per GPU;
# DGX B300 carries eight ConnectX-8 on its GPU board, one 800 Gb/s port per GPU (the DGX B300
# user guide's figures, as a review of it reads them: vengineer.hatenablog.com 2025-12-06).
SYSTEMS: dict[str, dict[str, Any]] = {
    "DGX-H100": {"gpu_model": "H100-SXM-80GB", "gpus_per_node": 8, "fabric_gbps_per_gpu": 400},
    "DGX-B200": {"gpu_model": "B200-SXM-180GB", "gpus_per_node": 8, "fabric_gbps_per_gpu": 400},
    "DGX-B300": {"gpu_model": "B300-SXM-288GB", "gpus_per_node": 8, "fabric_gbps_per_gpu": 800},
    "DGX-GB200": {
        "gpu_model": "GB200-NVL-186GB",
        "gpus_per_node": 4,
        "nvlink_domain_gpus": 72,
        "fabric_gbps_per_gpu": 400,
    },
    "DGX-GB300": {
        "gpu_model": "GB300-NVL-288GB",
        "gpus_per_node": 4,
        "nvlink_domain_gpus": 72,
        "fabric_gbps_per_gpu": 800,
    },
}
# systems outside NVIDIA's DGX line, with what each source says of them
SYSTEMS["WhiteFiber H200"] = {
    "gpu_model": "H200-SXM-141GB",
    "gpus_per_node": 8,
    "fabric_gbps_per_gpu": 400,
}
SYSTEM_NOTES = {
    "WhiteFiber H200": (
        "fabric: 400 Gb/s per GPU over Mellanox ConnectX-7 RDMA (the file); InfiniBand or RoCE "
        "not stated: InfiniBand assumed"
    ),
}
SYSTEM_GAPS = {
    "Grand Teton": (
        "Meta's Grand Teton H100 (96 GB HBM2e, 2.4 TB/s, at a 500 W power limit): its compute "
        "peak is not published (the torchtitan team: between the SXM's and the NVL's)"
    ),
}
SYSTEM_NOTE = (
    "fabric not stated by the table: the DGX reference design assumed (InfiniBand, "
    "{gbps} Gb/s per GPU{domain})"
)

# the tables' precision labels as a precision and FP8 recipe (None: the table's plain FP8,
# Table.plain_fp8; NVFP4 is a precision of its own, docs/MODEL.md "NVFP4"). 25.09 prints none.
PRECISIONS: dict[str, tuple[Precision, Fp8Recipe | None]] = {
    "FP8": (Precision.FP8, None),
    "FP8-CS": (Precision.FP8, Fp8Recipe.TENSORWISE),
    "MXFP8": (Precision.FP8, Fp8Recipe.MXFP8),
    "FP8-MX": (Precision.FP8, Fp8Recipe.MXFP8),
    "BF16": (Precision.BF16, None),
    "NVFP4": (Precision.NVFP4, None),
}
RECIPE_NOTES = {
    Fp8Recipe.TENSORWISE: "per-tensor current scaling",
    Fp8Recipe.DELAYED: "per-tensor delayed scaling",
    Fp8Recipe.MXFP8: "MX blocks of 32 with E8M0 scales (Blackwell's block-scaled tensor cores)",
}


NVFP4_NOTE = (
    "precision NVFP4: Megatron-Bridge's bf16_with_nvfp4_mixed (Transformer Engine's "
    "NVFP4BlockScaling on every layer's linear layers: src/megatron/bridge/training/"
    "mixed_precision.py, scripts/performance/utils/precision.py @067f987df03b); attention and "
    "the embedding and output layers in BF16"
)

# models whose NVFP4 benchmark recipe keeps layers and modules off NVFP4, by release: the
# workload's layer_precision and the recipe's words (a release not listed is left out)
_SUPER_NVFP4 = (
    "its NVFP4 recipe keeps the last 14 of the 88 layers in BF16 (first_last_layers_bf16, "
    "num_layers_at_end_in_bf16 14, none at the start: set_nemotron_3_super_common_configs in "
    "scripts/performance/configs/nemotronh/nemotron_3_llm_pretrain.py @{tag}), 6 Mamba-2, 7 "
    "MoE and 1 attention layer of its pattern, and in the other layers the attention and "
    "latent projections and the multi-token-prediction block in BF16 and the Mamba-2 output "
    "projections in MXFP8 (te_quant.cfg @{tag}: *.linear_qkv, *.linear_proj, "
    "*mlp.fc[12]_latent_proj, mtp.* bf16; *mixer.out_proj mxfp8)"
)
NVFP4_LAYER_PRECISION: dict[str, dict[str, tuple[dict[str, object], str]]] = {
    "Nemotron_3_Super": {
        release: (
            {
                "bf16_last_layers": 14,
                "bf16_modules": ["attention", "latent", "mtp"],
                "fp8_modules": ["mamba_out"],
            },
            _SUPER_NVFP4.format(tag=tag),
        )
        for release, tag in (
            ("26.04", "v0.4.0"),
            ("26.04.01", "v0.4.2"),
            ("26.06", "v0.5.0"),
            ("26.06.01", "v0.5.1"),
        )
    },
}


class _Skip(Exception):
    pass


# the tables' precision labels as the performance recipes name them (a plain "FP8" is current
# scaling: MEGATRON_BRIDGE_TABLE.plain_fp8)
RECIPE_PRECISION = {
    "BF16": "bf16",
    "FP8": "fp8_cs",
    "FP8-CS": "fp8_cs",
    "MXFP8": "fp8_mx",
    "FP8-MX": "fp8_mx",
    "NVFP4": "nvfp4",
}
# a table footnote that says a row measured a known regression: the row is not what the
# software does, and is left out with the footnote's words
REGRESSION = re.compile(r"performance regression[^.]*known issue(?: \([^)]*\))?", re.IGNORECASE)
MARKDOWN_LINK = re.compile(r"\[([^\]]+)\]\(([^)]+)\)")


@dataclass(frozen=True)
class BenchmarkRecipe:
    """One Megatron-Bridge performance configuration's settings, as one release shipped it
    (megatron_bridge_release_recipes.csv)."""

    release: str
    name: str
    source: str  # path:line @commit
    layout: tuple[int | None, ...]  # tp, pp, cp, vp, ep, gbs, mbs
    recompute: str  # none, selective, full
    method: str  # block, uniform or ""
    recompute_layers: int | None
    modules: tuple[str, ...]
    cpu_offload_layers: int
    tp_comm_overlap: bool
    ep_comm_overlap: bool
    # the MoE token dispatcher (moe_token_dispatcher_type, and the flex dispatcher's
    # moe_flex_dispatcher_backend), None for a dense recipe that states none
    dispatcher: Dispatcher | None = None
    # Transformer Engine's fused grouped MLP for the routed experts (cutedsl_fused_grouped_mlp),
    # read off a full-iteration CUDA graph: see FUSED_GROUPED_MLP_EVIDENCE
    fused_grouped_mlp: bool = False


# the release recipes' table records cuda_graph_impl but not cutedsl_fused_grouped_mlp: in the
# two releases that set it (26.06 v0.5.0, 26.06.01 v0.5.1; no earlier tag's scripts/performance
# names it) exactly the configurations with cuda_graph_impl "full_iteration" set it (38 of 38,
# each checked through its replace() chain in the *_workload_base_configs.py files), and a
# full-iteration graph of a dropless MoE needs the experts' device-side token counts the fused
# path takes (Megatron-Core: moe_expert_rank_capacity_factor with HybridEP requires
# use_transformer_engine_op_fuser, transformer_config.py @d98e8a64ddf3)
FUSED_GROUPED_MLP_EVIDENCE = (
    "every 26.06 and 26.06.01 configuration with a full-iteration CUDA graph sets "
    "cutedsl_fused_grouped_mlp, and no other does"
)


def _recipe_dispatcher(row: dict[str, str]) -> Dispatcher | None:
    """A recipe's dispatcher: Megatron-Core's flex dispatcher runs the backend named, its
    alltoall dispatcher NCCL's all-to-all whatever backend is also set (Megatron-Bridge's
    apply_flex_dispatcher_backend only takes effect with moe_token_dispatcher_type flex)."""
    kind = row["moe_token_dispatcher_type"].strip().lower()
    if kind == "flex":
        return Dispatcher(row["moe_flex_dispatcher_backend"].strip().lower())
    return Dispatcher.ALLTOALL if kind == "alltoall" else None


RecipeKey = tuple[str, str, str, str, str, int]


@cache
def benchmark_recipes(
    path: Path = MEGATRON_BRIDGE_RECIPES,
) -> dict[RecipeKey, list[BenchmarkRecipe]]:
    """The configurations by (release, model, system, precision, task, GPUs), as the tables
    name them."""
    recipes: dict[RecipeKey, list[BenchmarkRecipe]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            gpus = _int(row, "num_gpus")
            if gpus is None:
                continue
            recipe = BenchmarkRecipe(
                release=row["release"],
                name=row["recipe"],
                source=f"{row['path']}:{row['line']} @{row['commit'][:12]}",
                # a dense recipe's expert parallelism is 1 where the tables print n/a
                layout=tuple(
                    (_int(row, k) or 1) if k == "ep" else _int(row, k)
                    for k in ("tp", "pp", "cp", "vp", "ep", "gbs", "mbs")
                ),
                recompute=(row["recompute_granularity"] or "none").strip().lower(),
                method=(row["recompute_method"] or "").strip().lower(),
                recompute_layers=_int(row, "recompute_num_layers"),
                modules=tuple(m for m in (row["recompute_modules"] or "").split(";") if m),
                cpu_offload_layers=(
                    (_int(row, "cpu_offloading_num_layers") or 0)
                    if row["cpu_offloading"].strip().lower() == "true"
                    else 0
                ),
                tp_comm_overlap=row["tp_comm_overlap"].strip().lower() == "true",
                ep_comm_overlap=row["ep_comm_overlap"].strip().lower() == "true",
                dispatcher=_recipe_dispatcher(row),
                fused_grouped_mlp=row["cuda_graph_impl"].strip().lower() == "full_iteration",
            )
            key = (row["release"], row["model"], row["system"], row["precision"], row["task"], gpus)
            recipes.setdefault(key, []).append(recipe)
    return recipes


def _recipe_model(model: str) -> str:
    """The model a table row names as its configurations name it: "DeepSeekV3 (w/o MTP)" and
    "Qwen3_30B_a3B (tokendrop)" run DeepSeekV3's and Qwen3_30B_a3B's."""
    return re.sub(r"\s*\(.*\)$", "", model)


def _matching_recipe(
    table: Table,
    release: str,
    model: str,
    system: str,
    label: str,
    task: str,
    n_gpus: int,
    layout: tuple[int | None, ...],
) -> BenchmarkRecipe | None:
    """The configuration the row's release shipped with the row's very layout (TP, PP, CP,
    virtual stages, EP, global and micro-batch), if one: a row whose release defines none ran
    with settings its scripts do not state (overrides), and is left to the search. Variants
    of one layout (V1, V2) agree on the settings read here (tests hold them to it)."""
    if table.recipes is None:
        return None
    key = (
        release,
        _recipe_model(model),
        system,
        RECIPE_PRECISION.get(label, label.lower()),
        task,
        n_gpus,
    )
    for recipe in benchmark_recipes(table.recipes).get(key, []):
        if recipe.layout == layout:
            return recipe
    return None


# the per-tensor FP8 recipes of the release recipes' table (delayed and current scaling, costed
# alike: the model has one per-tensor rate)
PER_TENSOR_FP8 = frozenset({"fp8_ds", "fp8_cs"})


def _precision_of_layout(
    table: Table, row: dict[str, str], model: str, task: str
) -> tuple[str | None, str]:
    """A row whose table prints no precision (Megatron-Bridge's 25.09): the note saying it ran
    per-tensor FP8 when every configuration its release ships with the row's very layout (TP,
    PP, CP, virtual stages, EP, global and micro-batch) is a per-tensor FP8 one, its BF16
    configuration running another layout; else None and why the configurations cannot tell
    (the row stays unscored)."""
    if table.recipes is None or not row.get("release"):
        return None, ""
    try:
        layout = tuple(
            (_int(row, k) or 1) if k == "ep" else _int(row, k)
            for k in ("tp", "pp", "cp", "vp", "ep", "gbs", "mbs")
        )
        n_gpus = _int(row, "num_gpus")
    except _Skip:
        return None, ": its layout cells hold two runs' figures, which no precision names"
    wanted = (row["release"], _recipe_model(model), table.system_of(row), task, n_gpus)
    found = {
        precision: recipe.name
        for (release, m, s, precision, t, gpus), recipes in benchmark_recipes(table.recipes).items()
        if (release, m, s, t, gpus) == wanted
        for recipe in recipes
        if recipe.layout == layout
    }
    if not found:
        return None, ": no configuration of its release has its layout"
    if not set(found) <= PER_TENSOR_FP8:
        return None, ": its release ships its layout in BF16 as well as in FP8"
    return (
        f"precision not printed (release {row['release']}): per-tensor FP8, the only precision "
        f"the release ships with the row's layout ({', '.join(sorted(found.values()))}); its "
        "BF16 configuration runs another layout, and the table's footnote speaks of FP8 "
        "quantisation granularities"
    ), ""


# Megatron-Core's selective recompute modules whose recomputed FLOPs the model does not count:
# elementwise work (layernorm, moe_act) and MLA's up-projections (a few per cent of a layer)
SMALL_MODULES = frozenset({"layernorm", "moe_act", "mla_up_proj"})


def _recipe_recompute(
    recipe: BenchmarkRecipe, layers: int, pp: int, virtual: int | None
) -> tuple[Recompute, float | None, str]:
    """The recipe's activation recompute as the model's (kind, block share) and its note.
    Megatron-Core's block method recomputes ``recompute_num_layers`` of each model chunk's
    layers (a pipeline stage's, or a virtual stage's with interleaving)."""
    where = (
        f"release {recipe.release}'s benchmark configuration {recipe.name} ({recipe.source}), "
        "whose layout is the row's"
    )
    offload = (
        f"; CPU offloading of {recipe.cpu_offload_layers} layers' activations: not modelled "
        "(its host transfers assumed hidden, the memory it frees not credited)"
        if recipe.cpu_offload_layers
        else ""
    )
    if recipe.recompute == "full":
        if recipe.method == "block" and recipe.recompute_layers is not None:
            chunk = layers / (pp * (virtual or 1))
            share = min(1.0, recipe.recompute_layers / chunk)
            return (
                Recompute.FULL,
                share,
                f"activation recompute: full, block method, {recipe.recompute_layers} layers of "
                f"each model chunk's {chunk:g} ({share:.0%}), from {where}{offload}",
            )
        return Recompute.FULL, None, f"activation recompute: full, from {where}{offload}"
    if recipe.recompute == "selective":
        # the transcription fills in Megatron-Core's default (core_attn) where the modules are
        # unset, and leaves them empty where a configuration sets an empty list: nothing
        modules = recipe.modules
        if not modules:
            return (
                Recompute.NONE,
                None,
                f"activation recompute: selective of no modules (an empty list), from {where}"
                + offload,
            )
        if "core_attn" in modules:
            return (
                Recompute.SELECTIVE,
                None,
                f"activation recompute: selective ({', '.join(modules)}), from {where}{offload}",
            )
        uncounted = [m for m in modules if m not in SMALL_MODULES]
        return (
            Recompute.NONE,
            None,
            f"activation recompute: selective of {', '.join(modules)}, from {where}: costed as "
            + (
                "none (elementwise work and MLA's up-projections: a few per cent of a layer)"
                + (
                    "; moe_act's forward counted again (the routed experts' activation)"
                    if "moe_act" in modules
                    else ""
                )
                if not uncounted
                else f"none; the recomputed {', '.join(uncounted)} forward not counted "
                "(the model recomputes core attention or whole layers only)"
            )
            + offload,
        )
    return Recompute.NONE, None, f"activation recompute: none, from {where}{offload}"


def _architecture_note(shape: str) -> str:
    """The assumption naming a case's architecture preset and its source."""
    return f"architecture {shape} (its source: {architectures()[shape]['source'].split(';')[0]})"


def _int(row: dict[str, str], column: str) -> int | None:
    text = (row.get(column) or "").strip()
    if text in ("", "n/a", "-"):
        return None
    if not text.isdigit():
        raise _Skip(f"{column} {text!r} is not one number (two measurements in one cell?)")
    return int(text)


_THROUGHPUT = re.compile(r"\d{1,3}(,\d{3})+(\.\d+)?|\d+(\.\d+)?")


def _throughput(row: dict[str, str], column: str) -> float | None:
    """A published figure as printed: 4,497 (thousands separators) or 866.77; a cell holding
    two measurements ("37556 (36108)") is refused."""
    text = (row.get(column) or "").strip()
    if text in ("", "n/a", "-"):
        return None
    if not _THROUGHPUT.fullmatch(text):
        raise _Skip(f"{column} {text!r} is not one number (two measurements in one cell?)")
    return float(text.replace(",", ""))


def _release(row: dict[str, str]) -> str:
    """The container release the row names, else the documentation commit it was read at."""
    return row["release"] or row["commit"][:12]


# the tables' sections, by the task their runs train: "Pre-Training Performance"
# (Megatron-Bridge), "Pretraining" (NeMo 24.07), "SFT Performance", "LoRA Performance",
# "Fine-Tuning (LoRA) Performance" (AutoModel)
PRETRAIN, SFT, LORA = "pretrain", "sft", "lora"
# what a fine-tuning row's data is: neither table names a dataset for its rows. Megatron-
# Bridge's performance scripts default to mock data of the recipe's sequence length
# (scripts/performance/README.md: --data "Default `mock`", @067f987df03b); AutoModel says
# "full sequences with no padding" (docs/performance-summary.mdx @36044ad3d139): full-length
# sequences, as in pre-training
FINE_TUNING_DATA = (
    "data: full-length sequences of the row's length, as in pre-training (Megatron-Bridge's "
    "performance scripts default to mock data; AutoModel: 'full sequences with no padding')"
)


def _task(section: str) -> str | None:
    """The task a table section's rows train, or None for a section that is not training."""
    name = section.replace("-", "").lower()
    if name.startswith("pretraining"):
        return PRETRAIN
    if "lora" in name:
        return LORA
    # NeMo 24.07's "Finetuning" holds SFT and LoRA rows in one table
    if name.startswith(("sft", "finetuning")):
        return SFT
    return None


def _case(row: dict[str, str], table: Table, task: str = PRETRAIN) -> CalibrationCase:
    model = row["model_from_heading"] or row["model"]
    shape = table.architecture_of.get(model)
    if shape is None:
        raise _Skip(table.why_unmapped(model))
    lora, stated_recompute = (
        table.lora_of.get(model, (None, None)) if task == LORA else (None, None)
    )
    if task == LORA and lora is None:
        raise _Skip(f"{model}: the LoRA benchmark's adapters (rank, layers) are not read")
    cp = _int(row, "cp") or 1
    label = table.precision_of(row)
    derived: str | None = None
    if not label:
        derived, why = _precision_of_layout(table, row, model, task)
        if derived is None:
            raise _Skip(f"precision not printed (release {row['release']}){why}")
        label = "FP8"
    if "(" in label:
        raise _Skip(f"precision {label}: two recipes' measurements in one cell")
    if label not in PRECISIONS:
        raise _Skip(f"precision {label}: not modelled")
    precision, recipe = PRECISIONS[label]
    layer_precision: dict[str, object] | None = None
    if precision is Precision.NVFP4 and model in NVFP4_LAYER_PRECISION:
        mixed = NVFP4_LAYER_PRECISION[model].get(row["release"])
        if mixed is None:
            raise _Skip(
                f"precision {label}: the release's NVFP4 recipe for {model} (layers kept in "
                "BF16) is not read"
            )
        layer_precision, layer_note = mixed
    if precision is Precision.FP8 and recipe is None:
        recipe, why = table.plain_fp8
        fp8_note = f"precision {label}: FP8 recipe {recipe.value} ({why})"
        if derived is not None:
            fp8_note = f"{fp8_note}; {derived}"
    elif recipe is not None:
        fp8_note = f"precision {label}: FP8 recipe {recipe.value} ({RECIPE_NOTES[recipe]})"
    system = table.system_of(row)
    if system in SYSTEM_GAPS:
        raise _Skip(f"system {system}: {SYSTEM_GAPS[system]}")
    if system not in SYSTEMS:
        raise _Skip(f"system {system}: its GPU's specs are incomplete in gpus.csv")
    n_gpus, tp, pp = _int(row, "num_gpus"), _int(row, "tp"), _int(row, "pp")
    gbs, seq = _int(row, "gbs"), _int(row, table.sequence_column)
    mbs = _int(row, table.micro_batch_column) if table.micro_batch_column else None
    published = _throughput(row, "tokens_sec_gpu")
    if not (n_gpus and tp and pp and gbs and seq and published) or (
        table.micro_batch_column and not mbs
    ):
        raise _Skip("a layout, batch or throughput cell is empty")
    virtual = _int(row, "vp")
    fsdp = _int(row, "fsdp") or 0  # NeMo 24.07 has no FSDP column: read as none
    footnote = REGRESSION.search(MARKDOWN_LINK.sub(r"\1 (\2)", row.get("cell_footnotes") or ""))
    if footnote:
        raise _Skip(f"the table's footnote: {footnote.group(0)}: not what the software does")
    named = architectures()[shape]
    ep = _int(row, "ep")
    bench_recipe = _matching_recipe(
        table,
        _release(row),
        model,
        system,
        label,
        task,
        n_gpus,
        (tp, pp, cp, virtual, ep or 1, gbs, mbs),
    )

    recompute = Recompute(row[table.recompute_column]) if table.recompute_column else None
    listed = table.configuration_of.get((model, n_gpus)) if task == PRETRAIN else None
    if listed is not None:
        stated_recompute = listed.recompute
    recompute = stated_recompute or recompute
    block_share: float | None = None
    if bench_recipe is not None and recompute is None:
        recompute, block_share, recompute_note = _recipe_recompute(
            bench_recipe, int(named["fields"]["layers"]), pp, virtual
        )
    elif recompute is not None:
        recompute_note = f"activation recompute {recompute.value}, from the " + (
            f"benchmark's configuration ({listed.source})"
            if listed is not None
            else "benchmark's configuration"
            if stated_recompute
            else "row"
        )
    else:
        recompute_note = "activation recompute not stated: searched" + (
            " (release's benchmark configurations: none of the row's layout)"
            if table.recipes is not None
            else ""
        )
    tp_overlap = bench_recipe is not None and bench_recipe.tp_comm_overlap and tp > 1
    # Megatron-Core's selective recompute of the routed experts' activation (moe_act)
    moe_act = (
        "moe" in named["fields"]
        and bench_recipe is not None
        and bench_recipe.recompute == "selective"
        and "moe_act" in bench_recipe.modules
    )
    ep_overlap = bench_recipe is not None and bench_recipe.ep_comm_overlap
    notes = [
        _architecture_note(shape),
        f"{fp8_note}; the linear layers' GEMMs in FP8, attention and the embedding and "
        "output layers in BF16"
        if precision is Precision.FP8
        else NVFP4_NOTE + (f"; {layer_note}" if layer_precision is not None else "")
        if precision is Precision.NVFP4
        else "BF16",
        recompute_note,
        (
            f"TP communication overlap {'on' if bench_recipe.tp_comm_overlap else 'off'}, from the "
            f"benchmark configuration {bench_recipe.name}"
            + ("" if tp > 1 else " (TP 1: nothing to overlap)")
        )
        if bench_recipe is not None
        else "TP communication overlap not stated: not assumed",
        *([table.stack_note] if table.stack_note else []),
        *([table.bf16_weights_note] if table.bf16_weights_note else []),
        *([] if table.micro_batch_column else ["micro-batch not stated by the table: searched"]),
        *(
            [
                f"one of two runs the row prints in one cell ({row['paired_cell']}): the "
                f"{label} run's figure, in the order the precision cell names the recipes"
            ]
            if row.get("paired_cell")
            else []
        ),
    ]
    if task == SFT:
        notes += ["full fine-tuning (SFT): every weight trained, costed as pre-training"]
    if lora is not None:
        notes += [f"fine-tuning: {table.lora_note}; the base weights frozen"]
    if task != PRETRAIN:
        notes.append(FINE_TUNING_DATA)
    hardware = {**SYSTEMS[system], "gpu_count": n_gpus, "fabric_class": "infiniband"}
    domain = hardware.get("nvlink_domain_gpus")
    notes.append(
        SYSTEM_NOTES.get(system)
        or SYSTEM_NOTE.format(
            gbps=hardware["fabric_gbps_per_gpu"],
            domain=f"; NVL72: {domain} GPUs per NVLink domain" if domain else "",
        )
    )
    if fsdp:
        notes.append(f"fsdp {fsdp}: ZeRO-3 (FSDP) over the data-parallel ranks")
    fields = dict(named["fields"])
    stated_mtp = table.mtp_of.get(model)
    if stated_mtp is not None:
        fields["mtp_layers"] = stated_mtp[0]
        if not stated_mtp[0]:  # no depths: no block to share
            fields.pop("mtp_shared_layer", None)
        mtp_note = stated_mtp[1]
    elif fields.get("mtp_layers"):
        mtp_note = (
            f"multi-token prediction: {fields['mtp_layers']} depths"
            + (" of one shared block" if fields.get("mtp_shared_layer") else "")
            + ", as the architecture's source trains it; the block costed at the row's precision"
        )
    else:
        mtp_note = "multi-token prediction not stated: none modelled"
    if "moe" in fields:
        ep_source = "the row"
        if ep is None and listed is not None and listed.expert_parallel is not None:
            ep, ep_source = listed.expert_parallel, f"the benchmark configuration ({listed.source})"
        if ep is None:
            raise _Skip("an MoE row without its expert-parallel size")
        if (_int(row, "etp") or 1) != 1:
            raise _Skip("expert tensor parallelism > 1 is not modelled")
        dispatcher, dispatcher_source = table.dispatcher_of(row), "the row"
        if bench_recipe is not None and bench_recipe.dispatcher is not None:
            dispatcher = bench_recipe.dispatcher
            dispatcher_source = f"the benchmark configuration {bench_recipe.name}"
        fused = bench_recipe is not None and bench_recipe.fused_grouped_mlp
        fields["moe"] = {
            **fields["moe"],
            "expert_parallel": ep,
            **({"dispatcher": dispatcher} if dispatcher is not None else {}),
            **({"fused_grouped_mlp": True} if fused else {}),
        }
        if fused:
            notes.append(
                "routed experts in Transformer Engine's fused grouped MLP (no per-expert GEMM "
                f"calls): the benchmark configuration {bench_recipe.name} runs a full-iteration "
                f"CUDA graph ({FUSED_GROUPED_MLP_EVIDENCE})"
            )
        notes += [
            f"token dispatcher {dispatcher.value}, from {dispatcher_source}"
            if dispatcher is not None
            else "token dispatcher not stated: NCCL's all-to-all assumed",
            TOKEN_DROP if "(tokendrop)" in model else "routing force-balanced (the table's note)",
            f"expert parallel {ep}, from {ep_source}",
            mtp_note,
            (
                f"MoE all-to-all overlap on in the benchmark configuration {bench_recipe.name}: "
                "not applied (with the prior share hidden the MoE rows read faster still; "
                "docs/MODEL.md, Known limits)"
                if ep_overlap
                else "MoE all-to-all overlap off, from the benchmark configuration "
                + bench_recipe.name
            )
            if bench_recipe is not None
            else "MoE all-to-all overlap not stated: not assumed",
        ]
    fields.update(
        name=f"{model} {system} {label} {n_gpus} GPUs",
        seq_len=seq,
        global_batch_size=gbs,
        micro_batch_size=mbs,
        precision=precision,
        **({"fp8_recipe": recipe} if precision is Precision.FP8 else {}),
        layer_precision=layer_precision,
        zero_stage=3 if fsdp else 1,
        bf16_weights=bool(table.bf16_weights_note),
        stack=table.stack_of(row) if table.stack_of else table.stack,
        tokens=1e12,  # time-to-train is not scored; step time does not depend on it
        lora=lora,
        tp_comm_overlap=tp_overlap,
        moe_act_recompute=moe_act,
    )
    try:
        workload = Workload.model_validate(fields)
    except ValueError as exc:
        raise _Skip(f"workload invalid: {exc}") from None
    if n_gpus % (tp * pp * cp) or gbs % (n_gpus // (tp * pp * cp) * (mbs or 1)):
        raise _Skip(f"tp x pp x cp {tp * pp * cp} and the batch do not divide {n_gpus} GPUs")
    return CalibrationCase(
        run_id=(
            f"{table.run_prefix}_{_release(row)}_{model}_{system}_{label}_{n_gpus}gpu_"
            f"r{row['row_index']}{'' if task == PRETRAIN else '_' + task}"
        ),
        family=table.family,
        workload=workload,
        hardware=hardware,
        layout=LayoutGrid.partial(
            workload, tp, pp, mbs, recompute, virtual, cp=cp, block_share=block_share
        ),
        published_tokens_per_s_per_gpu=float(published),
        assumptions=tuple(notes),
    )


# a cell holding a measurement and, in parentheses, another: "FP8-CS (FP8-MX)", "37556 (36108)"
PAIRED = re.compile(r"\s*([^()]+?)\s*\(([^()]+)\)\s*")


def _unpaired(row: dict[str, str]) -> list[dict[str, str]]:
    """A row whose precision cell names two recipes ("FP8-CS (FP8-MX)") and whose throughput
    cells hold one measurement of each in the same order ("37556 (36108)"), at one layout,
    as the two runs it reports (Megatron-Bridge 25.11's Llama rows); any other row as it is.
    A row with a paired layout cell, or paired figures without the recipes' names (25.09's),
    is left whole: the harness refuses it with its reason."""
    recipes = PAIRED.fullmatch(row.get("precision") or "")
    figures = [
        PAIRED.fullmatch(row.get(c) or "") for c in ("tokens_sec_gpu", "model_tflop_sec_gpu")
    ]
    layout = ("num_gpus", "gbs", "mbs", "sequence_length", "tp", "pp", "cp", "vp", "ep")
    if recipes is None or figures[0] is None or any("(" in (row.get(c) or "") for c in layout):
        return [row]
    return [
        {
            **row,
            "precision": recipes[which],
            "tokens_sec_gpu": figures[0][which],
            "model_tflop_sec_gpu": figures[1][which] if figures[1] else "",
            "paired_cell": f"{row['precision']}: {row['tokens_sec_gpu']}",
        }
        for which in (1, 2)
    ]


def table_cases(table: Table) -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """A table's pre-training rows as cases; every other row skipped with its reason."""
    with table.path.open(newline="", encoding="utf-8") as handle:
        rows = [run for row in csv.DictReader(handle) for run in _unpaired(row)]
    cases: list[CalibrationCase] = []
    skipped: list[SkippedRow] = []
    for row in rows:
        system = table.system_of(row)
        run_id = f"{_release(row)} {row['model_from_heading'] or row['model']} {system}"
        task = _task(row["section"])
        if task is None or (task != PRETRAIN and table.fine_tuning_gap):
            why = table.fine_tuning_gap if task is not None else "not a training table"
            skipped.append(SkippedRow(run_id, f"{row['section']}: {why}"))
            continue
        try:
            cases.append(_case(row, table, task))
        except _Skip as skip:
            skipped.append(SkippedRow(run_id, str(skip)))
    assert all(math.isfinite(c.published_tokens_per_s_per_gpu) for c in cases)
    return cases, skipped


def megatron_bridge_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """Megatron-Bridge's pre-training rows as cases; every other row skipped with its reason."""
    return table_cases(MEGATRON_BRIDGE_TABLE)


def nemo_2407_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """NeMo 24.07's H100 FP8 pre-training rows as cases; the fine-tuning rows skipped."""
    return table_cases(NEMO_2407_TABLE)


def automodel_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """NeMo AutoModel's H100 BF16 pre-training rows (blind, like Megatron-Bridge's); the LoRA
    rows skipped."""
    return table_cases(AUTOMODEL_TABLE)


def torchtitan_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """torchtitan's published Llama 3.1 8B runs (PyTorch FSDP2, compiled or eager) as cases;
    the Grand Teton rows skipped with their reason (the eager factor's source, not scored)."""
    return table_cases(TORCHTITAN_TABLE)


def _earlier_printing(
    row: dict[str, str], earlier: list[dict[str, str]], layout: tuple[int, int, int, int]
) -> tuple[int, str] | None:
    """The GPU count of the table's earlier printing of a row (its GPU count, and the note
    saying so), where that printing has the row's system, sequence length, batch, TP, CP,
    DP (and PP 1) and TFLOP/s with CP, and GPUs equal to their product; else None."""
    tp, pp, dp, cp = layout
    for old in earlier:
        same = (
            old["system_from_heading"] == row["system_from_heading"]
            and old["section"] == row["section"]
            and old["seqlen_k"] == row["seqlen_k"]
            and old["batch_size"] == row["batch_size"]
            and (_int(old, "tp"), _int(old, "cp"), _int(old, "dp"), pp) == (tp, cp, dp, 1)
            and _throughput(old, "tflops_gpu") == _throughput(row, "with_cp_tflops_gpu")
        )
        gpus = _int(old, "num_of_gpus")
        if same and gpus == tp * pp * dp * cp:
            return gpus, (
                f"GPU count {gpus}, from the table's earlier printing (NVIDIA/NeMo "
                f"{old['source_path']} @{old['commit'][:12]}, line {old['source_line']}: the "
                f"row's layout, batch and {row['with_cp_tflops_gpu']} TFLOP/s on TP x DP x CP "
                f"= {gpus} GPUs); this printing says {row['num_of_gpus']}, "
                f"{(_int(row, 'num_of_gpus') or 0) / gpus:g} times its own TP x PP x DP x CP"
            )
    return None


def nemo_long_sequence_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """NeMo's long-sequence table (blind): each row's with-CP run at its printed layout, its
    TFLOP/s per GPU converted to tokens/s with NeMo's own FLOPs count. A row whose GPU count
    is not TP x PP x DP x CP (the DGX B200 rows, 4x) takes the count of the table's earlier
    printing where that printing has the same run with a consistent count; else it is left
    out, not fixed."""
    table = NEMO_LONG_SEQUENCE_TABLE
    with table.path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with NEMO_LONG_SEQUENCE_EARLIER.open(newline="", encoding="utf-8") as handle:
        earlier = list(csv.DictReader(handle))
    cases: list[CalibrationCase] = []
    skipped: list[SkippedRow] = []
    for row in rows:
        model = row["section"].partition(" (")[0]
        run_id = f"{_release(row)} {model} {table.system_of(row)} {row['seqlen_k']}K"
        try:
            gpus = _int(row, "num_of_gpus")
            tp, pp, dp, cp = (_int(row, f"with_cp_{k}") for k in ("tp", "pp", "dp", "cp"))
            seq_k, tflops = _int(row, "seqlen_k"), _throughput(row, "with_cp_tflops_gpu")
            if not (gpus and tp and pp and dp and cp and seq_k and tflops):
                raise _Skip("a layout, length or throughput cell is empty")
            count_note = None
            if gpus != tp * pp * dp * cp:
                found = _earlier_printing(row, earlier, (tp, pp, dp, cp))
                if found is None:
                    raise _Skip(
                        f"the printed GPU count is {gpus / (tp * pp * dp * cp):g}x TP x PP x DP "
                        "x CP in the same row (fixtures/SOURCES.md's caveat on this table), and "
                        "no earlier printing of the run has a consistent one: not fixed"
                    )
                gpus, count_note = found
            shape = table.architecture_of.get(model)
            if shape is None:
                raise _Skip(table.why_unmapped(model))
            seq = seq_k * 1024
            per_token = nemo_llama_flops_per_token(shape, seq)
            tokens = tflops * 1e12 / per_token
            cells = {
                **row,
                "model": model,
                "num_gpus": str(gpus),
                "tp": str(tp),
                "pp": str(pp),
                "cp": str(cp),
                "gbs": row["batch_size"],
                "sequence_length": str(seq),
                "tokens_sec_gpu": f"{tokens:.3f}",
            }
            case = _case(cells, table)
        except _Skip as skip:
            skipped.append(SkippedRow(run_id, str(skip)))
            continue
        without = _throughput(row, "without_cp_tflops_gpu")
        notes = (
            f"sequence {seq_k}K read as {seq} tokens; global batch {row['batch_size']} "
            f"sequences; data-parallel {dp}, from the row",
            f"published {tflops:g} TFLOP/s per GPU with CP, as tokens/s per GPU: "
            f"{tflops:g}e12 / {per_token / 1e9:.2f} GFLOP per token = {tokens:.1f} "
            f"({NEMO_FLOPS_FORMULA})",
            (
                f"the row's without-CP figure ({without:g} TFLOP/s) is this same layout's (CP 1): "
                "not scored twice"
                if cp == 1
                else WITHOUT_CP_GAP
            )
            if without is not None
            else "no without-CP figure printed",
            *([count_note] if count_note else []),
        )
        cases.append(
            replace(
                case,
                published_tokens_per_s_per_gpu=tokens,
                assumptions=(*case.assumptions, *notes),
            )
        )
    return cases, skipped


DEEPSEEK_V3_REPORT = PUBLISHED / "deepseek_v3_report.csv"


def deepseek_v3_report_cases() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """DeepSeek-V3's own pre-training run (blind): its report's GPU-hours per trillion tokens
    as tokens/s per GPU, at the report's layout (no TP, PP 16, EP 64, ZeRO-1 DP), batch,
    blockwise FP8, one MTP depth and DualPipe's all-to-all overlap, on H800 with eight 400 Gb/s
    InfiniBand NICs a node; the micro-batch searched (not stated)."""
    with DEEPSEEK_V3_REPORT.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases: list[CalibrationCase] = []
    for row in rows:
        shape = row["architecture"]
        n_gpus, tp, pp, ep = (_int(row, k) for k in ("num_gpus", "tp", "pp", "ep"))
        assert n_gpus and tp and pp and ep
        fields = dict(architectures()[shape]["fields"])
        # its all-to-all kernels send a token over InfiniBand once per target node and forward
        # it over NVLink there (report 3.2.2), as DeepEP, their release, does
        fields["moe"] = {**fields["moe"], "expert_parallel": ep, "dispatcher": Dispatcher.DEEPEP}
        fields.update(
            name=f"DeepSeek-V3 report {row['gpu_model']} {n_gpus} GPUs",
            seq_len=_int(row, "seq_len"),
            global_batch_size=_int(row, "gbs"),
            global_batch_tokens=None,
            precision=Precision(row["precision"]),
            fp8_recipe=Fp8Recipe(row["fp8_recipe"]),
            mtp_layers=_int(row, "mtp_layers"),
            ep_comm_overlap=row["ep_comm_overlap"] == "true",
            zero_stage=1,
            stack=Stack.MEGATRON,
            tokens=1e12,
        )
        workload = Workload.model_validate(fields)
        hardware = {
            "gpu_model": row["gpu_model"],
            "gpu_count": n_gpus,
            "gpus_per_node": _int(row, "gpus_per_node"),
            "fabric_class": "infiniband",
            "fabric_gbps_per_gpu": _int(row, "fabric_gbps_per_gpu"),
        }
        hours = float(row["gpu_hours_per_trillion_tokens"])
        published = 1e12 / (hours * 3600.0)
        notes = (
            _architecture_note(shape),
            f"published: {hours:,.0f} GPU hours per trillion tokens "
            f"('{row['quote_throughput']}') = {published:,.1f} tokens/s per GPU",
            f"layout TP {tp}, PP {pp}, EP {ep}, ZeRO-1 DP {_int(row, 'dp')} "
            f"('{row['quote_layout']}'); the micro-batch not stated: searched; DualPipe's "
            "schedule costed as 1F1B with its all-to-all overlapped (ep_comm_overlap)",
            "token dispatcher deepep: the report's all-to-all kernels send a token over "
            "InfiniBand once per target node and forward it over NVLink there (3.2.2)",
            f"batch {row['gbs']} sequences of {row['seq_len']} tokens ('{row['quote_batch']}'): "
            "the GPU hours are pre-training's average, its ramp included",
            f"precision {workload.precision_label}, multi-token prediction depth "
            f"{workload.mtp_layers} ('{row['quote_precision']}')",
            f"activation recompute costed as none ('{row['quote_recompute']}': elementwise work "
            "and MLA's up-projections, a few per cent of a layer)",
            f"fabric: InfiniBand, {row['fabric_gbps_per_gpu']} Gb/s per GPU "
            f"('{row['quote_cluster']}')",
        )
        cases.append(
            CalibrationCase(
                run_id=row["run_id"],
                family="deepseek_v3_report",
                workload=workload,
                hardware=hardware,
                layout=LayoutGrid.partial(workload, tp, pp, None, Recompute.NONE),
                published_tokens_per_s_per_gpu=published,
                assumptions=notes,
            )
        )
    return cases, []


def calibration_set() -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """The rows the model's constants are fitted on, each family apart: the published runs of
    published_runs_calibration.csv and NeMo 24.07's H100 FP8 table (the FP8 rows the FP8
    factor is fitted on). Megatron-Bridge's tables stay out: the blind check."""
    cases, skipped = map_rows()
    nemo, nemo_skipped = nemo_2407_cases()
    return cases + nemo, skipped + nemo_skipped
