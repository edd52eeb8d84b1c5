"""Published LLM serving measurements as cases a serving model can be scored on.

Reads the four compiled tables in ``fixtures/published_runs/serving/`` (copies of the shared
research data; SOURCES.md there says where every column comes from): MLPerf Inference v4.1 and
v5.1 datacenter LLM results, NVIDIA's TensorRT-LLM performance overview (three versions of the
page plus its online-serving table) and the TensorRT-LLM DeepSeek-R1 best-practice blog.

Every row either becomes a :class:`ServingCase` or is skipped with a one-line reason. The mapping
reads fields only: a GPU spelling goes through ``gpus.csv`` (or an explicit spelling rule below,
with its reason), a model name through an explicit table onto a named architecture, and a
number the row does not give stays ``None``. What each case needed beyond its own cells is
written into its ``assumptions``. See docs/SERVING_DATA.md for the counts.
"""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fabricscope.model.hardware import HardwareError
from fabricscope.model.workloads import architectures
from fabricscope.rank.catalog import resolve_gpu

SERVING_DATA = Path(__file__).resolve().parents[2] / "fixtures" / "published_runs" / "serving"
MLPERF_FILES = ("mlperf_inf_v4.1_llm.csv", "mlperf_inf_v5.1_llm.csv")
TRTLLM_OVERVIEW = "trtllm_perf_overview.csv"
TRTLLM_DSR1 = "trtllm_dsr1_best_perf.csv"
FILES = (*MLPERF_FILES, TRTLLM_OVERVIEW, TRTLLM_DSR1)
# MLPerf's prompt lengths, per dataset: a derivation (derive_input_lengths), not a copy
MLPERF_INPUT_LENGTHS = "mlperf_dataset_input_lengths.csv"

Precision = Literal["bf16", "fp8", "fp4", "int4"]
Row = Mapping[str, str]


@dataclass(frozen=True)
class ServingCase:
    """One published serving measurement. Units are in the names: tokens, ms, tokens/s."""

    case_id: str  # "<csv file>:<line>" (the header is line 1)
    source_id: str
    family: Literal["mlperf", "trtllm"]
    model: str  # a name in fabricscope.model.workloads.architectures() or SERVING_ARCHITECTURES
    model_as_published: str
    gpu_model: str  # canonical id in gpus.csv
    gpus: int  # GPUs the measurement used
    nodes: int
    multi_node: bool  # spans more than one server or tray (an NVL72 rack counts as 18 trays)
    tp: int | None
    pp: int | None
    ep: int | None
    dp: int | None
    weights_precision: Precision | None  # None only where the source states none (MLPerf v4.1)
    kv_precision: Precision | None
    # tokens; MLPerf: the dataset's mean prompt (mlperf_dataset_input_lengths.csv, derived from
    # a third party's per-sample table), its mix in input_mix
    input_len: float | None
    output_len: float | None  # tokens; MLPerf: the dataset's mean output tokens per sample
    scenario: str  # "offline" | "server" | "interactive" | "online" | "min-latency" | ...
    scenario_as_published: str
    ttft_limit_ms: float | None  # MLPerf p99 constraint; None for Offline
    tpot_limit_ms: float | None
    concurrency: int | None
    batch_size: int | None  # the engine's maximum batch (MLPerf gpu_batch_size, TRT max_batch_size)
    request_rate_per_s: float | None  # the offered load (inf: every request at once)
    measured_output_tokens_s_per_gpu: float
    measured_ttft_ms: float | None  # mean
    measured_tpot_ms: float | None  # mean
    measured_ttft_p99_ms: float | None
    measured_tpot_p99_ms: float | None
    measured_ttft_p50_ms: float | None
    measured_tpot_p50_ms: float | None
    measured_itl_ms: float | None  # mean inter-token latency where the source reports ITL
    system: str  # MLPerf: "<submitter> <platform>"; TRT-LLM: the table's parallel label
    framework: str
    date: str
    source_url: str
    assumptions: tuple[str, ...] = ()
    # MLPerf: the dataset's prompts in equal-count buckets, as (mean input tokens, share of
    # requests), shortest first; None where lengths are fixed
    input_mix: tuple[tuple[float, float], ...] | None = None
    division: Literal["closed", "open"] | None = None  # MLPerf's; None for the other sources


class _Skip(Exception):
    """A row cannot become a case; the message is the reason (one line)."""


# ---- model architectures

# Architectures for published serving models that neither workloads.json nor
# architectures.json names; the same shape fields as architectures.json, each with its source.
SERVING_ARCHITECTURES: dict[str, dict[str, Any]] = {
    "mistral-7b": {
        "description": "Mistral 7B (dense, GQA, sliding-window attention)",
        "source": (
            "Jiang et al. 2023, 'Mistral 7B', arXiv:2310.06825, Table 1 (dim 4096, 32 layers, "
            "head dim 128, hidden 14336, 32 heads, 8 KV heads, window 4096, context 8192, "
            "vocab 32000) = "
            "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json; "
            "NVIDIA-NeMo/Megatron-Bridge src/megatron/bridge/models/mistral/mistral_provider.py "
            "@2afd2d34f7d7b2e84095af1a7fd7244902189ebc (MistralModelProvider, Instruct-v0.3) has "
            "the same shape with vocab 32768. The TensorRT-LLM v0.17 table does not name its "
            "checkpoint: v0.1's vocabulary is used (v0.3 adds 6.3M parameters, <0.1%)"
        ),
        "fields": {
            "params_billion": 7.24,
            "layers": 32,
            "hidden_size": 4096,
            "heads": 32,
            "kv_heads": 8,
            "ffn_size": 14336,
            "gated_mlp": True,
            "vocab_size": 32000,
            "seq_len": 8192,
        },
    },
    "mixtral-8x22b": {
        "description": "Mixtral 8x22B (MoE: 8 experts, top-2)",
        "source": (
            "NVIDIA/NeMo nemo/collections/llm/gpt/model/mixtral.py "
            "@02f25a80bb783e04558303bed0d967bbcc486bdb (MixtralConfig8x22B: 56 layers, hidden "
            "6144, 48 heads, FFN 16384, 65536 positions; from MixtralConfig: 8 query groups, 8 "
            "experts, top-2, gated SiLU, untied embeddings); vocab 32000 from "
            "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json (the "
            "Instruct-v0.1 checkpoint has 32768; the TensorRT-LLM table names neither)"
        ),
        "fields": {
            "layers": 56,
            "hidden_size": 6144,
            "heads": 48,
            "kv_heads": 8,
            "ffn_size": 16384,
            "gated_mlp": True,
            "vocab_size": 32000,
            "seq_len": 65536,
            "moe": {"experts": 8, "top_k": 2},
        },
    },
    "llama4-scout": {
        "description": "Llama 4 Scout 17B-16E (MoE every layer: 16 experts, top-1, 1 shared)",
        "source": (
            "NVIDIA/NeMo nemo/collections/llm/gpt/model/llama.py (Llama4Config: 48 layers, hidden "
            "5120, 40 heads, 8 query groups, expert and shared-expert FFN 8192, top-1, vocab "
            "25256*8 = 202048, seq 8192; Llama4Experts16Config: 16 experts, every layer MoE), "
            "stored index id 3619477985; the importer reads "
            "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct/blob/main/"
            "config.json "
            "(text_config). Chunked/NoPE attention layers are modelled as standard attention"
        ),
        "fields": {
            "layers": 48,
            "hidden_size": 5120,
            "heads": 40,
            "kv_heads": 8,
            "head_dim": 128,
            "ffn_size": 16384,
            "gated_mlp": True,
            "vocab_size": 202048,
            "seq_len": 8192,
            "moe": {"experts": 16, "top_k": 1, "expert_ffn_size": 8192, "shared_experts": 1},
        },
    },
    "llama4-maverick": {
        "description": "Llama 4 Maverick 17B-128E (MoE every other layer: 128 experts, top-1)",
        "source": (
            "NVIDIA/NeMo nemo/collections/llm/gpt/model/llama.py (Llama4Config as for Scout: 48 "
            "layers, hidden 5120, 40 heads, 8 query groups, dense FFN 16384, expert and "
            "shared-expert FFN 8192, top-1, vocab 202048; Llama4Experts128Config: 128 experts, "
            "moe_layer_freq [0, 1] * 24, so half the layers are MoE), stored index id 3619477985; "
            "the importer reads "
            "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct/blob/main/"
            "config.json "
            "(interleave_moe_layer_step 2)"
        ),
        "fields": {
            "layers": 48,
            "hidden_size": 5120,
            "heads": 40,
            "kv_heads": 8,
            "head_dim": 128,
            "ffn_size": 16384,
            "gated_mlp": True,
            "vocab_size": 202048,
            "seq_len": 8192,
            "moe": {
                "experts": 128,
                "top_k": 1,
                "expert_ffn_size": 8192,
                "shared_experts": 1,
                "moe_layer_fraction": 0.5,
            },
        },
    },
}

# Multi-head latent attention (MLA) of named architectures whose training shapes model it as
# standard attention (the training model reads neither field; a serving KV cache does):
# the latent's width and the decoupled rotary key's, each with its source.
SERVING_MLA: dict[str, dict[str, Any]] = {
    "deepseek-v3": {
        "source": (
            "DeepSeek-AI 2024, 'DeepSeek-V3 Technical Report', arXiv:2412.19437, section 4.2: "
            "'The KV compression dimension d_c is set to 512 ... For the decoupled queries and "
            "key, we set the per-head dimension d_h^R to 64' (section 2.1.1: only the latent "
            "c_t^KV and the rotary key k_t^R are cached during generation) = "
            "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json "
            "(kv_lora_rank 512, qk_rope_head_dim 64)"
        ),
        "fields": {"kv_lora_rank": 512, "rope_head_dim": 64},
    },
}

# Published model names (exactly as the tables spell them, case-folded) -> architecture.
# Where a name maps onto an existing training preset, the architecture is the same:
MODEL_NAMES: dict[str, str] = {
    # Llama 2 70B: architectures.json 'llama2-70b' (meta-llama/Llama-2-70b-hf config.json:
    # 80 layers, hidden 8192, 64 heads, 8 KV heads, FFN 28672, vocab 32000)
    "llama2-70b": "llama2-70b",
    "llama-2-70b": "llama2-70b",
    "mixtral-8x7b": "mixtral-8x7b",
    # Llama 3.1 and 3.3 keep Llama 3's shapes (only RoPE scaling and context change): NVIDIA/NeMo
    # llama.py @008df615de39d6e00422c41f86f15fc0b7a03606 Llama31Config8B/70B/405B repeat
    # Llama3Config8B/70B's layers, hidden, FFN and heads, 8 query groups;
    # https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json is
    # Llama 3.1 70B's (80 layers, 8192, 28672, 64 heads, 8 KV heads, vocab 128256)
    "llama3.1-8b": "llama3-8b",
    "llama-3.1-8b": "llama3-8b",
    "llama 3.1 8b": "llama3-8b",
    "llama-3.1-70b": "llama3-70b",
    "llama 3.3 70b": "llama3-70b",
    "llama v3.3 70b": "llama3-70b",
    "llama3.1-405b": "llama3-405b",
    "llama-3.1-405b": "llama3-405b",
    "llama 3.1 405b": "llama3-405b",
    # DeepSeek-R1 (and R1-0528) is DeepSeek-V3's architecture: DeepSeek-AI 2025, arXiv:2501.12948
    # ("DeepSeek-R1 ... based on DeepSeek-V3-Base"); its config.json is DeepseekV3ForCausalLM
    "deepseek-r1": "deepseek-v3",
    "deepseek r1 0528": "deepseek-v3",
    # architectures.json (Megatron-Bridge's Qwen3 MoE providers)
    "qwen3-235b-a22b": "qwen3-235b-a22b",
    "qwen3 235b a22b": "qwen3-235b-a22b",
    "qwen3-30b-a3b": "qwen3-30b-a3b",
    "qwen3 30b a3b": "qwen3-30b-a3b",
    # SERVING_ARCHITECTURES
    "mistral-7b": "mistral-7b",
    "mixtral-8x22b": "mixtral-8x22b",
    "llama 4 scout": "llama4-scout",
    "llama 4 maverick": "llama4-maverick",
    "llama v4 maverick": "llama4-maverick",
    "gpt-oss 120b": "gpt-oss-120b",
    "gpt-oss 20b": "gpt-oss-20b",
}


def architecture(name: str) -> dict[str, Any]:
    """A case's model shape (the Workload shape fields) with its description and source; MLA
    from SERVING_MLA where the named shape models it as standard attention."""
    known = architectures()
    if name in known:
        entry = known[name]
        mla = SERVING_MLA.get(name)
        if mla is None:
            return entry
        fields = {**entry["fields"], **mla["fields"]}
        return {**entry, "fields": fields, "source": f"{entry['source']}; MLA: {mla['source']}"}
    if name in SERVING_ARCHITECTURES:
        return {"architecture": name, **SERVING_ARCHITECTURES[name]}
    raise KeyError(f"no architecture named {name!r}")


def _model(published: str) -> str:
    model = MODEL_NAMES.get(published.strip().casefold())
    if model is None:
        raise _Skip(f"model {published!r} has no architecture (not in MODEL_NAMES)")
    return model


# ---- GPUs

# Spellings resolve_gpu does not know, read by an explicit rule: (source_id or "*", spelling)
# -> (a spelling gpus.csv knows, why), or (None, why the row is skipped).
GPU_SPELLINGS: dict[tuple[str, str], tuple[str | None, str]] = {
    ("*", "NVIDIA H200-SXM-141GB-CTS"): (
        "H200 SXM",
        "'H200-SXM-141GB-CTS' read as H200 SXM 141GB (CTS: NVIDIA's custom thermal solution, "
        "the same chip and memory at a higher power limit)",
    ),
    ("*", "Virtualized NVIDIA H200-SXM-141GB"): (
        "H200 SXM",
        "'Virtualized NVIDIA H200-SXM-141GB' read as H200 SXM 141GB (a VM on the same GPU)",
    ),
    ("*", "NVIDIA GH200 Grace Hopper Superchip 144GB"): (
        None,
        "GPU 'GH200 144GB' (HBM3e) is not in gpus.csv",
    ),
    ("*", "[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo"): (
        None,
        "GPU 'Intel Arc Pro B60' is not in gpus.csv",
    ),
    # The v0.17 table's column headers: "H100 80GB HBM3" is the SXM part (the PCIe card has
    # HBM2e; gpus.csv lists nvidia-smi's "NVIDIA H100 80GB HBM3" as an H100 SXM alias)
    ("trtllm_perf_overview_v0.17", "H100"): (
        "NVIDIA H100 80GB HBM3",
        "TensorRT-LLM v0.17 'H100 80GB HBM3' read as H100 SXM (only the SXM H100 has 80 GB HBM3)",
    ),
    ("trtllm_perf_overview_v0.17_online", "H100"): (
        "NVIDIA H100 80GB HBM3",
        "TensorRT-LLM v0.14 online 'H100 80GB HBM3' read as H100 SXM (only the SXM H100 has 80 GB "
        "HBM3)",
    ),
    ("trtllm_perf_overview_v0.17", "H200"): (
        "H200 SXM",
        "TensorRT-LLM v0.17 'H200 141GB HBM3' read as H200 SXM: the table runs it at TP 8, which "
        "needs the SXM board's 8-way NVLink switch, and the page's later versions name 'H200 SXM "
        "141GB (DGX H200)'",
    ),
    ("trtllm_perf_overview_v0.17_online", "H200"): (
        "H200 SXM",
        "TensorRT-LLM v0.14 online 'H200 131GB HBM3' (sic) read as H200 SXM, as the same page's "
        "throughput table and its later versions ('H200 SXM 141GB (DGX H200)')",
    ),
    ("trtllm_perf_overview_v0.17", "A100"): (
        "A100-SXM4-80GB",
        "TensorRT-LLM v0.17 column header 'A100-SXM4-80GB'",
    ),
    ("trtllm_perf_overview_v0.17", "GH200"): (
        None,
        "GPU 'GH200 480GB' names the superchip's LPDDR5X; its HBM (96 GB or 144 GB) is not stated",
    ),
    # v1.0 and latest pages: "H100 SXM 80GB (DGX H100)", "H200 SXM 141GB (DGX H200)",
    # "B200 180GB (DGX B200)", "GB200 192GB (GB200 NVL72)", "RTX 6000 Pro Blackwell Server Edition"
    ("trtllm_perf_overview_v1.0", "H100"): ("H100 SXM", "page lists 'H100 SXM 80GB (DGX H100)'"),
    ("trtllm_perf_overview_latest", "H100"): ("H100 SXM", "page lists 'H100 SXM 80GB (DGX H100)'"),
    ("trtllm_perf_overview_v1.0", "H200"): ("H200 SXM", "page lists 'H200 SXM 141GB (DGX H200)'"),
    ("trtllm_perf_overview_latest", "H200"): (
        "H200 SXM",
        "page lists 'H200 SXM 141GB (DGX H200)'",
    ),
    ("*", "RTX PRO 6000 Blackwell SE"): (
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "page lists 'RTX 6000 Pro Blackwell Server Edition'",
    ),
    ("trtllm_dsr1_best_perf", "H200"): (
        "H200 SXM",
        "DeepSeek-R1 blog 'H200' read as H200 SXM: 8 GPUs at TP 8 need the SXM board's 8-way "
        "NVLink switch, and NVIDIA's TensorRT-LLM pages of the time measure DGX H200",
    ),
}


def _gpu(source_id: str, spellings: tuple[str, ...], notes: list[str]) -> str:
    """The canonical GPU for the first spelling that resolves (gpus.csv, then GPU_SPELLINGS)."""
    for spelling in spellings:
        if not spelling:
            continue
        rule = GPU_SPELLINGS.get((source_id, spelling)) or GPU_SPELLINGS.get(("*", spelling))
        if rule is not None:
            alias, why = rule
            if alias is None:
                raise _Skip(why)
            notes.append(why)
            return resolve_gpu(alias)
        try:
            return resolve_gpu(spelling)
        except HardwareError:
            continue
    raise _Skip(f"GPU {' / '.join(s for s in spellings if s)!r} is not in gpus.csv")


# ---- precisions

SIXTEEN_BIT = "FP16 counted as bf16: both 2 bytes per value and the same dense tensor rate"
# (weights, KV cache, note) per precision cell as published
PRECISIONS: dict[str, tuple[Precision | None, Precision | None, str | None]] = {
    "fp8": ("fp8", None, None),
    "fp4": ("fp4", None, None),
    "mxfp4": ("fp4", None, "MXFP4 weights counted as fp4"),
    "uint4": ("int4", None, None),
    "(not stated in results summary)": (
        None,
        None,
        "weights precision not stated in MLPerf v4.1's results: left None",
    ),
    "fp8 (weights+kv fp8 per doc: fp8 quantization sets kv cache fp8)": ("fp8", "fp8", None),
    "fp16": ("bf16", None, SIXTEEN_BIT),
    'bf16 (stated: "bf16 precision")': ("bf16", None, None),
    "fp4 weights (kv not stated)": ("fp4", None, None),
    "fp4 weights, fp8 kv cache": ("fp4", "fp8", None),
    "fp4 weights, fp16 kv cache": ("fp4", "bf16", SIXTEEN_BIT + " (KV cache)"),
    "fp8 weights (kv not stated)": ("fp8", None, None),
}


def _precision(text: str, notes: list[str]) -> tuple[Precision | None, Precision | None]:
    found = PRECISIONS.get(text.strip().casefold())
    if found is None:
        raise _Skip(f"precision {text!r} is not stated or not understood")
    weights, kv, note = found
    if note:
        notes.append(note)
    return weights, kv


# ---- reading cells


def _number(row: Row, column: str) -> float | None:
    text = (row.get(column) or "").strip().replace(",", "")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _integer(row: Row, column: str, notes: list[str]) -> int | None:
    """An integer cell; several values joined by '|' (not disambiguated by the source) -> None."""
    text = (row.get(column) or "").strip()
    if "|" in text:
        notes.append(f"{column} {text!r}: the source holds several settings; left None")
        return None
    value = _number(row, column)
    return None if value is None else round(value)


def _per_gpu(total: float | None, gpus: int) -> float:
    if total is None or total <= 0:
        raise _Skip("no throughput")
    return total / gpus


# ---- MLPerf

MLPERF_BENCHMARK_SUFFIX = re.compile(r"-99(\.9)?$")

# MLPerf's prompts come from each benchmark's dataset, whose lengths MLCommons does not
# publish as a mean. Red Hat PSAP's performance dashboard (openshift-psap/performance-dashboard)
# keeps one row per sample (input_length, output_length) of each official dataset file, made by
# its mlperf-data/original/generate_dataset_summaries.py: a third party's derivation from the
# official files, not an MLCommons statement. Each table's file there, the commit that added
# it, and the official dataset file it was read from (as that script names it).
PSAP_REPO = "openshift-psap/performance-dashboard"
PSAP_HEAD = "71007029fb5bced1d79808e7e64dc4c2af82ea55"  # holds the same bytes as each commit below
MLPERF_DATASET_TABLES: dict[str, tuple[str, str, str]] = {
    "llama2-70b": (
        "mlperf-data/summaries/llama2-70b-99.csv",
        "7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb",
        "open_orca_gpt4_tokenized_llama.sampled_24576.pkl.gz",
    ),
    "mixtral-8x7b": (
        "mlperf-data/summaries/mixtral-8x7b.csv",
        "67033baeaac181a3a35641dd2b86a7cb22d856dd",
        "09292024_mixtral_15k_mintoken2_v1.pkl",
    ),
    "llama3.1-8b": (
        "mlperf-data/summaries/llama3-1-8b-datacenter.csv",
        "7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb",
        "cnn_eval.json",
    ),
    "llama3.1-405b": (
        "mlperf-data/summaries/llama3-1-405b.csv",
        "67033baeaac181a3a35641dd2b86a7cb22d856dd",
        "mlperf_llama3.1_405b_dataset_8313_processed_fp16_eval.pkl",
    ),
    "deepseek-r1": (
        "mlperf-data/summaries/deepseek-r1.csv",
        "7cd1065d1e2c53ee745cbda08e2a8f13a42c93bb",
        "mlperf_deepseek_r1_dataset_4388_fp8_eval.pkl",
    ),
}
LENGTH_BUCKETS = 10
INPUT_LENGTH_COLUMNS = (
    "dataset",
    "bucket",
    "samples",
    "input_tokens_min",
    "input_tokens_max",
    "input_tokens_mean",
    "dataset_samples",
    "dataset_input_tokens_mean",
    "source_repo",
    "source_path",
    "source_commit",
    "source_sha256",
    "official_file",
)


def derive_input_lengths(
    tables_dir: Path, buckets: int = LENGTH_BUCKETS
) -> list[dict[str, str | int | float]]:
    """The rows of MLPERF_INPUT_LENGTHS from verbatim copies of PSAP's per-sample tables in
    ``tables_dir`` (named as in MLPERF_DATASET_TABLES, e.g. ``llama2-70b-99.csv``): each
    dataset's prompts sorted by length and cut into ``buckets`` equal-count buckets (numpy's
    array_split: sizes differ by at most one sample), each with its sample count, shortest,
    longest and mean input tokens; the dataset's count and mean beside every bucket. Output
    lengths are not read: the tables' are the reference answers (and the Llama 3.1 8B one's a
    characters / 4 estimate), not what a benchmarked system generated."""
    import numpy as np  # only the derivation needs it

    out: list[dict[str, str | int | float]] = []
    for dataset, (path, commit, official) in MLPERF_DATASET_TABLES.items():
        table = tables_dir / Path(path).name
        raw = table.read_bytes()
        lengths = np.sort(
            np.array(
                [int(row["input_length"]) for row in csv.DictReader(raw.decode().splitlines())],
                dtype=np.int64,
            )
        )
        for number, part in enumerate(np.array_split(lengths, buckets), start=1):
            out.append(
                {
                    "dataset": dataset,
                    "bucket": number,
                    "samples": len(part),
                    "input_tokens_min": int(part.min()),
                    "input_tokens_max": int(part.max()),
                    "input_tokens_mean": round(float(part.mean()), 2),
                    "dataset_samples": len(lengths),
                    "dataset_input_tokens_mean": round(float(lengths.mean()), 2),
                    "source_repo": PSAP_REPO,
                    "source_path": path,
                    "source_commit": commit,
                    "source_sha256": hashlib.sha256(raw).hexdigest(),
                    "official_file": official,
                }
            )
    return out


def write_input_lengths(tables_dir: Path, target: Path) -> None:
    with target.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=INPUT_LENGTH_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(derive_input_lengths(tables_dir))


@dataclass(frozen=True)
class DatasetInputs:
    """One MLPerf dataset's prompts: the mean and the equal-count buckets' (mean, share)."""

    dataset: str
    samples: int
    mean_input_tokens: float
    buckets: tuple[tuple[float, float], ...]


@functools.cache
def dataset_inputs(data_dir: Path = SERVING_DATA) -> dict[str, DatasetInputs]:
    """MLPERF_INPUT_LENGTHS by dataset (the benchmark's name without -99 or -99.9)."""
    rows: dict[str, list[Row]] = {}
    with (data_dir / MLPERF_INPUT_LENGTHS).open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            rows.setdefault(row["dataset"], []).append(row)
    out = {}
    for dataset, parts in rows.items():
        total = int(parts[0]["dataset_samples"])
        if sum(int(p["samples"]) for p in parts) != total:
            raise ValueError(f"{MLPERF_INPUT_LENGTHS}: {dataset}'s buckets do not sum to {total}")
        out[dataset] = DatasetInputs(
            dataset=dataset,
            samples=total,
            mean_input_tokens=float(parts[0]["dataset_input_tokens_mean"]),
            buckets=tuple(
                (float(p["input_tokens_mean"]), int(p["samples"]) / total)
                for p in sorted(parts, key=lambda p: int(p["bucket"]))
            ),
        )
    return out


def _mlperf_inputs(row: Row, reference: str, notes: list[str]) -> DatasetInputs | None:
    found = dataset_inputs(SERVING_DATA).get(reference)
    if found is None:
        return None
    path, commit, _ = MLPERF_DATASET_TABLES[reference]
    notes.append(
        f"prompts: {reference}'s dataset, mean {found.mean_input_tokens:g} tokens over "
        f"{found.samples:,} samples in {len(found.buckets)} equal-count buckets, derived from "
        f"{PSAP_REPO} {path} @{commit[:8]} (a third party's table of the official dataset file, "
        "not an MLCommons figure); every bucket given the dataset's mean output"
    )
    if reference == "mixtral-8x7b" and row["source_id"] == "mlperf_inf_v4.1":
        notes.append(
            "prompts: the Mixtral dataset file read (09292024_mixtral_15k_mintoken2_v1) is dated "
            "after v4.1's results (2024-08-28); the 15,000 samples taken to be v4.1's"
        )
    return found


def _mlperf_duplicate(row: Row, rows: list[tuple[str, Row]]) -> str | None:
    """The id of the -99 row this -99.9 row reports again (the same run), if any."""
    flagged = (row.get("same_run_as_other_accuracy_target") or "").startswith("yes")
    if not flagged or not row["benchmark"].endswith("-99.9"):
        return None
    twin = row["benchmark"].removesuffix(".9")
    for other_id, other in rows:
        if (
            other["benchmark"] == twin
            and all(other[c] == row[c] for c in ("submitter", "division", "platform", "scenario"))
            and other["throughput_tokens_s_total"] == row["throughput_tokens_s_total"]
        ):
            return other_id
    return None


def _mlperf_case(case_id: str, row: Row, rows: list[tuple[str, Row]]) -> ServingCase:
    notes: list[str] = []
    total = _number(row, "throughput_tokens_s_total")
    if total is None:
        raise _Skip("no throughput")
    if "heterogeneous" in row["gpu"]:
        raise _Skip(f"heterogeneous GPU cluster ({row['accelerator_verbatim']})")
    benchmark = row["benchmark"]
    reference = MLPERF_BENCHMARK_SUFFIX.sub("", benchmark)
    used = (row.get("used_model") or "").replace("llama3_1", "llama3.1")
    if used and used not in (benchmark, reference):
        raise _Skip(f"open division: model {row['used_model']!r} is not {benchmark}'s reference")
    if "(open division" in row["model"]:
        raise _Skip(
            f"open division ({row['platform']}): the row does not say how its model differs "
            "from the reference"
        )
    twin = _mlperf_duplicate(row, rows)
    if twin is not None:
        raise _Skip(f"the same run as {twin} (reported under both -99 and -99.9)")
    gpu = _gpu(row["source_id"], (row["accelerator_verbatim"], row["gpu"]), notes)
    model = _model(reference)
    weights, kv = _precision(row["precision"], notes)
    inputs = _mlperf_inputs(row, reference, notes)
    gpus = int(row["gpu_count"])
    scenario = row["scenario"].strip().casefold()
    limited = scenario != "offline"
    batch = (row.get("concurrency_or_batch") or "").removeprefix("gpu_batch_size=")
    batch_size = None
    if batch.isdigit():
        batch_size = int(batch)
    elif batch:
        notes.append(f"gpu_batch_size {batch!r}: the source holds several settings; left None")
    return ServingCase(
        case_id=case_id,
        source_id=row["source_id"],
        family="mlperf",
        model=model,
        # the benchmark names the accuracy target (-99 or -99.9): two runs, two cases
        model_as_published=row["model"]
        if row["model"] == benchmark
        else f"{row['model']} ({benchmark})",
        gpu_model=gpu,
        gpus=gpus,
        nodes=int(row["nodes"]),
        multi_node=row["multi_node"] == "True",
        tp=_integer(row, "tp", notes),
        pp=_integer(row, "pp", notes),
        ep=_integer(row, "ep", notes),
        dp=_integer(row, "dp", notes),
        weights_precision=weights,
        kv_precision=kv,
        input_len=inputs.mean_input_tokens if inputs else None,
        output_len=_number(row, "mean_output_tokens_per_sample"),
        scenario=scenario,
        scenario_as_published=row["scenario"],
        ttft_limit_ms=_number(row, "ttft_constraint_ms") if limited else None,
        tpot_limit_ms=_number(row, "tpot_constraint_ms") if limited else None,
        concurrency=None,
        batch_size=batch_size,
        request_rate_per_s=_number(row, "target_qps") if limited else None,
        # Performance_Result is the whole system's output tokens/s (SOURCES.md)
        measured_output_tokens_s_per_gpu=_per_gpu(total, gpus),
        measured_ttft_ms=_number(row, "ttft_ms_mean"),
        measured_tpot_ms=_number(row, "tpot_ms_mean"),
        measured_ttft_p99_ms=_number(row, "ttft_ms_p99"),
        measured_tpot_p99_ms=_number(row, "tpot_ms_p99"),
        measured_ttft_p50_ms=_number(row, "ttft_ms_p50"),
        measured_tpot_p50_ms=_number(row, "tpot_ms_p50"),
        measured_itl_ms=None,
        system=f"{row['submitter']} {row['platform']}",
        framework=row["framework"],
        date=row["date"],
        source_url=row["source_url"],
        assumptions=tuple(notes),
        input_mix=inputs.buckets if inputs else None,
        division="open" if row["division"].strip() == "open" else "closed",
    )


# ---- TensorRT-LLM

# the performance overview's tables and what kind of run each is
TRTLLM_SCENARIOS = {
    "trtllm_perf_overview_v0.17": "offline",
    "trtllm_perf_overview_v1.0": "offline",
    "trtllm_perf_overview_latest": "offline",
    "trtllm_perf_overview_v0.17_online": "online",
}
# the latest page reports output tokens/s per GPU; the others the whole GPU group's
PER_GPU_SOURCES = frozenset({"trtllm_perf_overview_latest"})


def _trtllm_case(case_id: str, row: Row) -> ServingCase:
    notes: list[str] = []
    source = row["source_id"]
    gpus = int(row["gpu_count"])
    if source in PER_GPU_SOURCES:
        # "Output Throughput per GPU (tokens/sec/GPU)": the published cell itself
        per_gpu = _per_gpu(_number(row, "value_verbatim"), 1)
    else:
        # whole-group output tokens/s (v0.17: the TP group; online: "Output Tput"; v1.0:
        # "Total Output Throughput") over the GPUs measured
        per_gpu = _per_gpu(_number(row, "throughput_tokens_s_total"), gpus)
    gpu = _gpu(source, (row["gpu"],), notes)
    model = _model(row["model"])
    weights, kv = _precision(row["precision"], notes)
    qps = (row.get("qps") or "").strip()
    rate = math.inf if qps == "INF" else _number(row, "qps")
    if source == TRTLLM_DSR1.removesuffix(".csv"):
        return _dsr1_case(case_id, row, notes, gpu, model, weights, kv, per_gpu)
    return ServingCase(
        case_id=case_id,
        source_id=source,
        family="trtllm",
        model=model,
        model_as_published=row["model"],
        gpu_model=gpu,
        gpus=gpus,
        nodes=1,  # single servers (GB200: at most 4 GPUs, one tray), SOURCES.md
        multi_node=row["multi_node"] == "True",
        tp=_integer(row, "tp", notes),
        pp=_integer(row, "pp", notes),
        ep=_integer(row, "ep", notes),
        dp=_integer(row, "dp", notes),
        weights_precision=weights,
        kv_precision=kv,
        input_len=_number(row, "input_len"),
        output_len=_number(row, "output_len"),
        scenario=TRTLLM_SCENARIOS[source],
        scenario_as_published=row["scenario"],
        ttft_limit_ms=None,
        tpot_limit_ms=None,
        concurrency=None,
        batch_size=None,
        request_rate_per_s=rate,
        measured_output_tokens_s_per_gpu=per_gpu,
        measured_ttft_ms=_number(row, "ttft_ms"),
        measured_tpot_ms=_number(row, "tpot_ms"),
        measured_ttft_p99_ms=None,
        measured_tpot_p99_ms=None,
        measured_ttft_p50_ms=None,
        measured_tpot_p50_ms=None,
        measured_itl_ms=_number(row, "itl_ms"),
        system=row["parallel_label_verbatim"],
        framework=row["framework"],
        date=row["date"],
        source_url=row["source_url"],
        assumptions=tuple(notes),
    )


DSR1_LOAD = re.compile(r"concurrency (\d+), max_batch_size (\d+)")


def _dsr1_case(
    case_id: str,
    row: Row,
    notes: list[str],
    gpu: str,
    model: str,
    weights: Precision | None,
    kv: Precision | None,
    per_gpu: float,
) -> ServingCase:
    load = DSR1_LOAD.fullmatch(row["concurrency_or_batch"].strip())
    scenario = row["scenario"].split(",", 1)[0].strip()
    return ServingCase(
        case_id=case_id,
        source_id=row["source_id"],
        family="trtllm",
        model=model,
        model_as_published=f"{row['model']} ({row['model_hf_id']})",
        gpu_model=gpu,
        gpus=int(row["gpu_count"]),
        nodes=1,
        multi_node=row["multi_node"] == "True",
        tp=_integer(row, "tp", notes),
        pp=_integer(row, "pp", notes),
        ep=_integer(row, "ep", notes),
        dp=None,  # "attention DP" is stated without a degree
        weights_precision=weights,
        kv_precision=kv,
        input_len=_number(row, "input_len"),
        output_len=_number(row, "output_len"),
        scenario=scenario,
        scenario_as_published=row["scenario"],
        ttft_limit_ms=None,
        tpot_limit_ms=None,
        concurrency=int(load.group(1)) if load else None,
        batch_size=int(load.group(2)) if load else None,
        request_rate_per_s=None,
        measured_output_tokens_s_per_gpu=per_gpu,
        measured_ttft_ms=None,
        measured_tpot_ms=None,
        measured_ttft_p99_ms=None,
        measured_tpot_p99_ms=None,
        measured_ttft_p50_ms=None,
        measured_tpot_p50_ms=None,
        measured_itl_ms=None,
        system=f"TP {row['tp']} EP {row['ep']}" + (f" {row['dp']}" if row["dp"] else ""),
        framework=row["framework"],
        date=row["date"],
        source_url=row["source_url"],
        assumptions=tuple(notes),
    )


# ---- loading


def _rows(path: Path) -> list[tuple[str, Row]]:
    """(row id, row): the id is the file's name and the row's line (the header is line 1)."""
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return [(f"{path.name}:{reader.line_num}", row) for row in reader]


@functools.cache
def _mapped(data_dir: Path) -> tuple[tuple[ServingCase, ...], tuple[tuple[str, str], ...]]:
    cases: list[ServingCase] = []
    skipped_rows: list[tuple[str, str]] = []
    for name in FILES:
        rows = _rows(data_dir / name)
        for row_id, row in rows:
            try:
                if name in MLPERF_FILES:
                    cases.append(_mlperf_case(row_id, row, rows))
                else:
                    cases.append(_trtllm_case(row_id, row))
            except _Skip as reason:
                skipped_rows.append((row_id, str(reason)))
    return tuple(cases), tuple(skipped_rows)


def map_rows(data_dir: Path = SERVING_DATA) -> tuple[list[ServingCase], list[tuple[str, str]]]:
    """Every source row either becomes a case or is skipped as (row id, reason)."""
    cases, skipped_rows = _mapped(data_dir.resolve())
    return list(cases), list(skipped_rows)


def load_cases(data_dir: Path = SERVING_DATA) -> list[ServingCase]:
    return map_rows(data_dir)[0]


def skipped(data_dir: Path = SERVING_DATA) -> list[tuple[str, str]]:
    return map_rows(data_dir)[1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=f"Write {MLPERF_INPUT_LENGTHS} from PSAP's per-sample MLPerf dataset tables"
    )
    parser.add_argument("tables", type=Path, help="a folder with the tables (git show copies)")
    parser.add_argument("--out", type=Path, default=SERVING_DATA / MLPERF_INPUT_LENGTHS)
    args = parser.parse_args(argv)
    write_input_lengths(args.tables, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
