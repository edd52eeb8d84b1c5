"""Validation of the scaling model against published training runs.

Reads the compiled table ``fixtures/published_runs/published_runs_calibration.csv`` (every
row names its source), maps each row that carries enough information onto the model's
inputs, runs :func:`fabricscope.model.scaling.estimate` and compares tokens/s per GPU.

The harness only maps fields. Every assumption it makes for a row (a GPU spelling read by
an explicit rule, a missing vocabulary filled with the model family's published value, a
FLOP convention used to turn TFLOP/s into tokens/s...) is written into that case's
``assumptions``; a row that cannot be mapped is skipped with its reason. Nothing here keys
on a row's identity, and nothing in the model knows which row it is estimating.

Run ``python -m fabricscope.accuracy.validation`` for the table and the fitted constants.
"""

from __future__ import annotations

import csv
import functools
import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from fabricscope.model.hardware import HardwareError
from fabricscope.model.scaling import (
    FP8_EFFICIENCY_PRIOR,
    LayoutGrid,
    ModelConstants,
    estimate,
    fitted_constants,
)
from fabricscope.model.workload import Precision, Recompute, Stack, Workload
from fabricscope.rank.catalog import gpu_specs, profiles, resolve_gpu

FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "fixtures"
    / "published_runs"
    / "published_runs_calibration.csv"
)

SETTINGS = FIXTURE.with_name("source_settings.csv")

Row = Mapping[str, str]

# ---- settings a row leaves unstated but its cited source states (the training script it
# names, the framework's defaults then): fixtures/published_runs/source_settings.csv, one
# line per source document and setting, each with its evidence. A row's own value wins.
SETTING_NAMES = (
    "activation_recompute",
    "micro_batch",
    "virtual_stages",
    "flash_attention",
    "dropout",
    "kv_heads",
    "ffn_size",
    "gated_mlp",
)


@functools.cache
def source_settings(path: Path = SETTINGS) -> dict[str, dict[str, tuple[str, str]]]:
    """source document -> setting -> (value, evidence)."""
    settings: dict[str, dict[str, tuple[str, str]]] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        for line, item in enumerate(csv.DictReader(handle), start=2):
            name = item["setting"]
            if name not in SETTING_NAMES or not item["evidence"].strip():
                raise ValueError(f"{path.name} line {line}: unknown setting or no evidence")
            settings.setdefault(item["source_document"], {})[name] = (
                item["value"],
                item["evidence"],
            )
    return settings


def _flag(value: str) -> bool:
    if value not in ("true", "false"):
        raise ValueError(f"{SETTINGS.name}: {value!r} is not true or false")
    return value == "true"


# ---- GPU spellings that fabricscope.rank.catalog.resolve_gpu does not know. Each rule is exact
# (never a substring), says why, and may state the node's GPU count and the node design's
# scale-out fabric, used only when the row itself gives none.


@dataclass(frozen=True)
class GpuRule:
    gpu_model: str
    reason: str
    gpus_per_node: int | None = None
    fabric_class: str | None = None
    fabric_gbps_per_gpu: float | None = None
    fabric_reason: str = ""


GPU_RULES: dict[str, GpuRule] = {
    "A100 (80GB per README context)": GpuRule(
        "A100-SXM-80GB",
        "'A100 (80GB per README context)' read as A100-SXM-80GB: the Megatron-LM README runs "
        "are on Selene DGX A100 80GB nodes (SXM4)",
        fabric_class="infiniband",
        fabric_gbps_per_gpu=200,
        fabric_reason="fabric not in row: InfiniBand HDR 200 Gb/s per GPU assumed (DGX A100 / "
        "Selene, as the same README's 2021 scaling rows state)",
    ),
    "H100 (SXM, 8/node per NVIDIA DGX)": GpuRule(
        "H100-SXM-80GB",
        "'H100 (SXM, 8/node per NVIDIA DGX)' read as H100-SXM-80GB, 8 per node (the spelling "
        "states SXM and DGX H100)",
        gpus_per_node=8,
        fabric_class="infiniband",
        fabric_gbps_per_gpu=400,
        fabric_reason="fabric not in row (source: 'IB NDR likely but NOT stated'): InfiniBand "
        "NDR 400 Gb/s per GPU assumed (DGX H100 design: 8x ConnectX-7 400 Gb/s per node)",
    ),
    "H100-SXM5-80GB (700W)": GpuRule(
        "H100-SXM-80GB",
        "'H100-SXM5-80GB (700W)' read as H100-SXM-80GB (H100-SXM5-80GB is a gpus.csv alias; "
        "700 W is the SXM5 power limit)",
    ),
    "A100-40GB": GpuRule(
        "A100-SXM-40GB",
        "'A100-40GB' read as A100-SXM-40GB: 8 GPUs per node with 8x200 Gb/s RoCE is the HGX "
        "A100 40GB (SXM4) node design; the source does not name the form factor",
    ),
}

FABRIC_CLASSES = {"infiniband": "infiniband", "roce": "roce", "efa": "efa", "ethernet": "ethernet"}

# ---- vocabulary sizes published for a model family, used only when a row leaves vocab empty
FAMILY_VOCAB: dict[str, tuple[int, str]] = {
    "NVIDIA/Megatron-LM README.md": (
        51200,
        "vocab not in row: 51,200 (the Megatron-LM README: 'All models use a vocabulary size of "
        "51,200')",
    ),
}

# ---- FLOP conventions of published TFLOP/s and MFU figures, per source document.
# Each returns FLOPs per trained token as the source counts them.


@dataclass(frozen=True)
class FlopConvention:
    source_pattern: str
    name: str
    flops_per_token: Callable[[Workload], float]
    description: str


def _narayanan_2021(w: Workload) -> float:
    layers, h, s, v = w.layers, w.hidden_size, w.seq_len, w.vocab_size
    return 96.0 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))


def _megatron_core(w: Workload) -> float:
    layers, h, s, v = w.layers, w.hidden_size, w.seq_len, w.vocab_size
    return 72.0 * layers * h * h * (1 + s / (6 * h) + v / (12 * layers * h))


def _six_n(w: Workload) -> float:
    return 6.0 * w.total_params


FLOP_CONVENTIONS: tuple[FlopConvention, ...] = (
    FlopConvention(
        r"2104\.04473",
        "Narayanan et al. 2021 eq. 3",
        _narayanan_2021,
        "TFLOP/s -> tokens/s with Megatron's 96*B*s*l*h^2*(1 + s/6h + V/16lh) per step "
        "(Narayanan et al. SC'21 eq. 3; counts the full-recompute forward)",
    ),
    FlopConvention(
        r"Megatron-LM README\.md @d98e8a64",
        "Megatron-Core num_floating_point_operations",
        _megatron_core,
        "TFLOP/s -> tokens/s with Megatron-Core's model FLOPs 72*B*s*l*h^2*(1 + s/6h + V/12lh) "
        "(megatron/training/training.py num_floating_point_operations for MHA, FFN 4h; no "
        "recompute); the README says 'MFU' but not the formula: assumed",
    ),
    FlopConvention(
        r"2407\.21783",
        "6N",
        _six_n,
        "TFLOP/s -> tokens/s with 6*N per token (the Llama 3 paper's compute budget "
        "3.8e25 = 6 x 405e9 x 15.6e12 uses 6N; the convention behind Table 4 TFLOP/s is not "
        "stated: assumed; counting non-causal attention 12*l*s*h would lower the published "
        "tokens/s by 8%)",
    ),
)


@dataclass(frozen=True)
class CalibrationCase:
    """One published measurement mapped onto the model's inputs."""

    run_id: str
    family: str
    workload: Workload
    hardware: dict[str, Any]
    layout: LayoutGrid | None  # the published layout (unknown dimensions searched), or None
    published_tokens_per_s_per_gpu: float
    assumptions: tuple[str, ...]
    # False where the source row says VERIFY (values recalled or quoted second-hand): such
    # rows are scored and shown, but neither fitted on nor held to the accuracy targets
    verified: bool = True

    @property
    def n_gpus(self) -> int:
        return int(self.hardware["gpu_count"])


@dataclass(frozen=True)
class SkippedRow:
    run_id: str
    reason: str


@dataclass(frozen=True)
class CaseScore:
    run_id: str
    family: str
    n_gpus: int
    layout: str  # the layout the model ran (chosen where the row leaves a dimension open)
    published: float  # tokens/s per GPU
    predicted: float  # tokens/s per GPU; NaN when the model finds no layout that fits
    error_percent: float  # |predicted - published| / published; 100 when nothing fits
    fits_memory: bool
    verdict: str
    # the same with the memory check relaxed where it rejects every candidate layout: the
    # error of the timing terms alone (equal to the above when a layout fits)
    predicted_timing: float
    timing_error_percent: float
    breakdown: dict[str, float] = field(default_factory=dict)  # seconds per step
    assumptions: tuple[str, ...] = ()
    verified: bool = True  # see CalibrationCase.verified


@dataclass(frozen=True)
class FitReport:
    """Fitted and default values; errors are timing errors before and after the fit."""

    fitted: dict[str, float]
    default: dict[str, float]
    bounds: dict[str, tuple[float, float]]
    median_before: float
    max_before: float
    median_after: float
    max_after: float
    evaluations: int
    notes: tuple[str, ...]


class _Skip(Exception):
    """A row cannot be mapped; the message is the reason."""


# ---- reading rows


def _number(row: Row, column: str) -> float | None:
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _integer(row: Row, column: str) -> int | None:
    value = _number(row, column)
    return None if value is None else round(value)


def _source_document(row: Row) -> str:
    """The cited document without its section note: 'owner/repo file @commit' or the paper."""
    return (row.get("source") or "").split(" (", 1)[0].strip()


def _family(row: Row) -> str:
    return (row.get("run_id") or "").split("_", 1)[0]


# the software stack each source family ran (Workload.stack); a family not named ran Megatron
FAMILY_STACKS = {
    "llmfoundry": (
        Stack.FSDP,
        "software stack: MosaicML llm-foundry (Composer over PyTorch FSDP, fused attention): "
        "costed as stack fsdp",
    ),
    "llama3": (
        Stack.FSDP,
        "software stack: Meta's PyTorch training stack (FSDP for data parallelism, arXiv:"
        "2407.21783 section 3.3.2), not Megatron: costed as stack fsdp",
    ),
}


def _sibling(row: Row, rows: Sequence[Row]) -> Row | None:
    """Another row of the same source document describing the same model and batch that
    gives the architecture (a strong-scaling row next to its weak-scaling twin)."""
    keys = ("params_billion", "seq_len", "vocab_size", "global_batch_sequences")
    matches = [
        other
        for other in rows
        if other is not row
        and _source_document(other) == _source_document(row)
        and all(_number(other, k) == _number(row, k) for k in keys)
        and all(_number(row, k) is not None for k in keys)
        and _integer(other, "n_layers")
        and _integer(other, "hidden_size")
    ]
    return matches[0] if len(matches) == 1 else None


def _gpu(spelling: str, notes: list[str]) -> tuple[str, GpuRule | None]:
    try:
        return resolve_gpu(spelling), None
    except HardwareError:
        rule = GPU_RULES.get(spelling)
        if rule is None:
            raise _Skip(
                f"GPU {spelling!r} is not in gpus.csv nor in the validation GPU rules"
            ) from None
        notes.append(rule.reason)
        return rule.gpu_model, rule


def _precision(text: str, notes: list[str]) -> Precision:
    lowered = text.strip().lower()
    if not lowered:
        notes.append("precision not stated: BF16 assumed")
        return Precision.BF16
    if "fp8" in lowered:
        return Precision.FP8
    if "bf16" in lowered:
        return Precision.BF16
    if "fp16" in lowered:
        notes.append("FP16 mixed precision modelled as BF16 (same tensor-core peak)")
        return Precision.BF16
    raise _Skip(f"precision {text!r} is not modelled")


def _recompute(text: str, notes: list[str]) -> Recompute | None:
    lowered = text.strip().lower()
    if not lowered:
        notes.append(
            "activation recompute not stated: searched (none, selective, full, and block "
            "recompute of 25/50/75% of each stage's layers)"
        )
        return None
    for mode in (Recompute.SELECTIVE, Recompute.FULL, Recompute.NONE):
        if lowered.startswith(mode.value):
            return mode
    raise _Skip(f"activation_recompute {text!r} is not one of none/selective/full")


def _zero_stage(text: str, notes: list[str]) -> int:
    lowered = text.strip().lower()
    if not lowered:
        notes.append("ZeRO stage not stated: the workload default (ZeRO-1) assumed")
        return 1
    if "fsdp" in lowered and "full_shard" in lowered:
        return 3
    match = re.search(r"zero-(\d)", lowered)
    if match:
        return int(match.group(1))
    raise _Skip(f"zero_stage_or_fsdp {text!r} is not modelled")


def _heads(row: Row, hidden: int, tp: int | None, notes: list[str]) -> int:
    heads = _integer(row, "n_heads")
    if heads:
        return heads
    placeholder = hidden // 128
    if hidden % 128 or (tp and placeholder % tp):
        raise _Skip("n_heads missing and hidden_size/128 is not a valid placeholder")
    notes.append(
        f"n_heads not in row: placeholder {placeholder} (hidden/128); heads enter the model "
        "only through the no-recompute activation memory and the TP search"
    )
    return placeholder


# ---- throughput


def _published_throughput(
    row: Row, workload: Workload, gpu_model: str, n_gpus: int, notes: list[str]
) -> float:
    per_gpu = _number(row, "tokens_per_second_per_gpu")
    if per_gpu:
        return per_gpu
    total = _number(row, "tokens_per_second")
    if total:
        notes.append("tokens/s per GPU = tokens_per_second / n_gpus")
        return total / n_gpus
    step = _number(row, "step_time_s")
    if step:
        notes.append(
            f"tokens/s per GPU = {workload.batch_tokens} batch tokens / {step:g} s step / "
            f"{n_gpus} GPUs"
        )
        return workload.batch_tokens / step / n_gpus
    tflops = _number(row, "tflops_per_gpu")
    mfu = _number(row, "mfu_percent")
    if tflops is None and mfu is None:
        raise _Skip("no throughput column (tokens/s, step time, TFLOP/s or MFU)")
    convention = next(
        (c for c in FLOP_CONVENTIONS if re.search(c.source_pattern, row.get("source") or "")),
        None,
    )
    if convention is None:
        raise _Skip("TFLOP/s or MFU only, and the source's FLOP convention is not known")
    if tflops is None:
        assert mfu is not None
        tflops = mfu / 100.0 * gpu_specs()[gpu_model].bf16_dense_tflops
        notes.append(f"TFLOP/s = MFU {mfu:g}% x {gpu_model} BF16 dense peak")
    notes.append(convention.description)
    return tflops * 1e12 / convention.flops_per_token(workload)


# ---- one row


def _case(row: Row, rows: Sequence[Row]) -> CalibrationCase:
    notes: list[str] = []
    run_id = row["run_id"]
    cp = _integer(row, "cp") or 1
    if (_integer(row, "ep") or 1) > 1 or _number(row, "moe_experts"):
        raise _Skip("mixture-of-experts rows need expert counts the table does not give")

    source_row: Row = row
    if not (_integer(row, "n_layers") and _integer(row, "hidden_size")):
        sibling = _sibling(row, rows)
        if sibling is None:
            missing = [
                column
                for column in ("n_layers", "hidden_size", "n_gpus", "global_batch_sequences")
                if not _number(row, column)
            ]
            recalled = (
                "; its notes recall a configuration from the paper marked VERIFY, which the "
                "harness does not read as data"
                if "VERIFY" in (row.get("notes") or "")
                else ""
            )
            raise _Skip(
                f"missing {', '.join(missing)}, and no row of the same source document "
                f"describes the same model (params, seq_len, vocab, batch){recalled}"
            )
        notes.append(
            f"architecture (layers, hidden, heads), GPU and node taken from {sibling['run_id']} "
            "(same source document, same params, seq_len, vocab and batch)"
        )
        source_row = sibling

    n_gpus = _integer(row, "n_gpus")
    if not n_gpus:
        raise _Skip("n_gpus not in row")
    spelling = row.get("gpu_model") or ""
    try:
        gpu_model, rule = _gpu(spelling, notes)
    except _Skip:
        if source_row is row:
            raise
        gpu_model, rule = _gpu(source_row.get("gpu_model") or "", notes)
    if gpu_model not in gpu_specs():
        raise _Skip(f"GPU {gpu_model}: its specs are incomplete in gpus.csv")

    per_node = _integer(row, "gpus_per_node") or _integer(source_row, "gpus_per_node")
    if not per_node and rule and rule.gpus_per_node:
        per_node = rule.gpus_per_node
    if not per_node:
        raise _Skip("gpus_per_node not in row nor stated by its GPU spelling")

    fabric_type = (row.get("fabric_type") or "").strip().lower()
    gbps = _number(row, "fabric_gbps_per_gpu")
    if fabric_type:
        fabric_class = FABRIC_CLASSES.get(fabric_type)
        if fabric_class is None:
            raise _Skip(f"fabric_type {fabric_type!r} has no fabric class")
    elif rule and rule.fabric_class:
        fabric_class, gbps = rule.fabric_class, rule.fabric_gbps_per_gpu
        notes.append(rule.fabric_reason)
    else:
        raise _Skip("fabric_type not in row and no rule for its GPU spelling")
    if n_gpus > per_node and not gbps:
        raise _Skip("fabric_gbps_per_gpu not in row for a multi-node run")

    layers = _integer(source_row, "n_layers")
    hidden = _integer(source_row, "hidden_size")
    assert layers and hidden
    seq = _integer(row, "seq_len")
    if not seq:
        raise _Skip("seq_len not in row")
    vocab = _integer(row, "vocab_size")
    if not vocab:
        family_vocab = FAMILY_VOCAB.get(_source_document(row).split(" @", 1)[0])
        if family_vocab is None:
            raise _Skip("vocab_size not in row and the model family's value is not recorded")
        vocab = family_vocab[0]
        notes.append(family_vocab[1])

    # ---- layout: the row's own; tp = pp = 1 when dp covers every GPU
    tp, pp, dp = _integer(row, "tp"), _integer(row, "pp"), _integer(row, "dp")
    if tp is None and pp is None and dp == n_gpus:
        tp, pp = 1, 1
        notes.append("tp = pp = 1 because dp equals the GPU count")
    if (tp is None) != (pp is None):
        raise _Skip("the row gives only one of tp and pp")
    if tp and pp and dp and tp * pp * cp * dp != n_gpus:
        raise _Skip(f"tp x pp x cp x dp = {tp * pp * cp * dp} is not n_gpus {n_gpus}")
    if cp > 1 and not (tp and pp):
        raise _Skip("context parallelism without the row's tp and pp")
    stated = source_settings().get(_source_document(row), {})

    def setting(name: str) -> str | None:
        if name not in stated:
            return None
        value, evidence = stated[name]
        notes.append(f"{name} = {value}, not in the row but in its source: {evidence}")
        return value

    micro = None
    match = re.search(r"micro-batch (\d+)", row.get("notes") or "")
    if match:
        micro = int(match.group(1))
    elif (value := setting("micro_batch")) is not None:
        micro = int(value)
    recompute_text = row.get("activation_recompute") or setting("activation_recompute") or ""
    recompute = _recompute(recompute_text, notes)
    virtual = setting("virtual_stages")
    flash = setting("flash_attention")
    dropout = setting("dropout")
    kv_heads = setting("kv_heads")
    ffn_size = setting("ffn_size")
    gated = setting("gated_mlp")
    if tp and micro is None:
        notes.append("micro-batch not stated: searched over 1, 2, 4, 8")
    if tp is None:
        notes.append("no layout in row: tp, pp, micro-batch and recompute searched")

    sequences = _integer(row, "global_batch_sequences")
    batch_tokens = _integer(row, "global_batch_tokens")
    if not sequences and not batch_tokens:
        raise _Skip("global batch not in row")
    batch = {"global_batch_size": sequences} if sequences else {"global_batch_tokens": batch_tokens}

    heads = _integer(source_row, "n_heads") or _heads(row, hidden, tp, notes)
    precision = _precision(row.get("precision") or "", notes)
    zero = _zero_stage(row.get("zero_stage_or_fsdp") or "", notes)
    stack, stack_note = FAMILY_STACKS.get(_family(row), (Stack.MEGATRON, ""))
    if stack_note:
        notes.append(stack_note)
    tp_overlap = "--tp-comm-overlap" in (row.get("notes") or "")
    if tp_overlap:
        notes.append("the source states --tp-comm-overlap: TP communication overlapped")
    try:
        workload = Workload(
            name=run_id,
            params_billion=_number(row, "params_billion") or _number(source_row, "params_billion"),
            layers=layers,
            hidden_size=hidden,
            heads=heads,
            seq_len=seq,
            vocab_size=vocab,
            tokens=1e12,  # time-to-train is not scored; step time does not depend on it
            micro_batch_size=micro,
            precision=precision,
            activation_recompute=recompute,
            zero_stage=zero,
            tp_comm_overlap=tp_overlap,
            stack=stack,
            flash_attention=_flag(flash) if flash else True,
            dropout=_flag(dropout) if dropout else False,
            kv_heads=int(kv_heads) if kv_heads else None,
            ffn_size=int(ffn_size) if ffn_size else None,
            gated_mlp=_flag(gated) if gated else False,
            **batch,
        )
    except ValueError as exc:
        raise _Skip(f"workload invalid: {exc}") from None

    layout = (
        LayoutGrid.partial(
            workload, tp, pp, micro, recompute, int(virtual) if virtual else None, cp=cp
        )
        if tp and pp
        else None
    )
    if cp > 1:
        notes.append(f"context parallelism cp = {cp}, from the row")

    hardware: dict[str, Any] = {
        "gpu_model": gpu_model,
        "gpu_count": n_gpus,
        "gpus_per_node": per_node,
        "fabric_class": fabric_class,
        "fabric_gbps_per_gpu": gbps or 0.0,
    }
    published = _published_throughput(row, workload, gpu_model, n_gpus, notes)
    verified = not any("VERIFY" in (row.get(column) or "") for column in ("notes", "source"))
    if not verified:
        notes.append(
            "source row says VERIFY (values recalled or quoted second-hand): scored, but "
            "outside the fit and the accuracy targets"
        )
    return CalibrationCase(
        run_id=run_id,
        family=_family(row),
        workload=workload,
        hardware=hardware,
        layout=layout,
        published_tokens_per_s_per_gpu=published,
        assumptions=tuple(notes),
        verified=verified,
    )


def read_rows(path: Path = FIXTURE) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def map_rows(path: Path = FIXTURE) -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """Every row either becomes a case or is skipped with the reason."""
    rows = read_rows(path)
    cases: list[CalibrationCase] = []
    skipped: list[SkippedRow] = []
    for row in rows:
        try:
            cases.append(_case(row, rows))
        except _Skip as reason:
            skipped.append(SkippedRow(row.get("run_id") or "?", str(reason)))
    return cases, skipped


def calibration_cases(path: Path = FIXTURE) -> list[CalibrationCase]:
    return map_rows(path)[0]


# ---- scoring


def score(
    cases: Iterable[CalibrationCase], constants: ModelConstants | None = None
) -> list[CaseScore]:
    c = constants or ModelConstants()
    # infinite headroom: every candidate fits, so only the timing terms choose and estimate
    no_memory_check = replace(c, memory_headroom=-math.inf)
    scores: list[CaseScore] = []
    for case in cases:
        hw = profiles([case.hardware])
        result = estimate(case.workload, hw, case.layout, c).row(0)
        fits = bool(result["fits_memory"])
        if not fits:
            result = estimate(case.workload, hw, case.layout, no_memory_check).row(0)
        timing = float(result["tokens_per_s"]) / case.n_gpus
        published = case.published_tokens_per_s_per_gpu
        timing_error = abs(timing - published) / published * 100.0
        predicted = timing if fits else math.nan
        error = timing_error if fits else 100.0
        breakdown = {
            name: float(result[name])
            for name in (
                "step_time_s",
                "compute_s",
                "bubble_s",
                "tp_comm_s",
                "pp_comm_s",
                "dp_comm_exposed_s",
                "optimizer_s",
                "memory_gb_per_gpu",
            )
        }
        scores.append(
            CaseScore(
                run_id=case.run_id,
                family=case.family,
                n_gpus=case.n_gpus,
                layout=str(result["layout"]),
                published=published,
                predicted=predicted,
                error_percent=error,
                fits_memory=fits,
                verdict=str(result["verdict"]) if fits else "no layout fits memory",
                predicted_timing=timing,
                timing_error_percent=timing_error,
                breakdown=breakdown,
                assumptions=case.assumptions,
                verified=case.verified,
            )
        )
    return scores


def summary(scores: Sequence[CaseScore], timing: bool = False) -> dict[str, float]:
    """n, median, max and mean absolute percentage error (``timing``: of the timing terms)."""
    errors = np.array(
        [s.timing_error_percent if timing else s.error_percent for s in scores], dtype=np.float64
    )
    return {
        "n": float(len(errors)),
        "median": float(np.median(errors)) if len(errors) else math.nan,
        "max": float(np.max(errors)) if len(errors) else math.nan,
        "mean": float(np.mean(errors)) if len(errors) else math.nan,
    }


# ---- fitting

FIT_BOUNDS: dict[str, tuple[float, float]] = {
    "eta_compute_max": (0.4, 0.95),
    "matrix_width_half": (0.0, 2000.0),
    "fp8_efficiency_factor": (0.4, 1.0),
    "dp_overlap": (0.5, 0.95),
}
GRID_POINTS = {
    "eta_compute_max": 12,
    "matrix_width_half": 11,
    "fp8_efficiency_factor": 4,
    "dp_overlap": 4,
}


def _objective(cases: Sequence[CalibrationCase], constants: ModelConstants) -> tuple[float, float]:
    """Mean absolute percentage error, the median breaking ties. The mean, not the median:
    a median is flat wherever the rows that decide it do not move, so over a set that one
    family dominates (llm-foundry holds 78 of 112 rows) it ignored the others and the fit
    wandered along the valley that family leaves (a leave-one-family-out fit without
    Megatron-Core's H100 rows landed at eta_max 0.79, w_half 421)."""
    errors = [s.timing_error_percent for s in score(cases, constants)]
    return float(np.mean(errors)), float(np.median(errors))


def fit_constants(
    cases: Sequence[CalibrationCase],
    base: ModelConstants | None = None,
    grid_points: Mapping[str, int] | None = None,
) -> tuple[ModelConstants, FitReport]:
    """Global constants minimising the mean absolute percentage error (the median breaks
    ties; :func:`_objective` says why the mean).

    The error fitted is the timing error (:attr:`CaseScore.timing_error_percent`): a case
    whose published layout the memory check rejects scores 100% whatever these four timing
    constants are, which would make the objective flat in them. A coarse
    grid over the bounded ranges, then two finer grids around the best point. A constant no
    case can inform keeps a value the cases did not set, and the report says so: without FP8
    cases the FP8 factor keeps its prior (the default was itself fitted on FP8 rows); DP
    overlap, when no case exposes DP communication anywhere in its range, its default.
    ``grid_points`` overrides the points per constant of each grid (a coarse fit for a quick
    check).
    """
    start = base or ModelConstants()
    points = {**GRID_POINTS, **(grid_points or {})}
    unverified = [case.run_id for case in cases if not case.verified]
    cases = [case for case in cases if case.verified]
    notes: list[str] = [
        f"objective: mean timing error over the {len(cases)} verified cases (memory "
        "rejections scored by timing)"
    ]
    if unverified:
        notes.append(f"not fitted on: {', '.join(unverified)} (their source rows say VERIFY)")
    # the constants ModelConstants marks fitted; FP8's only where there are FP8 cases
    names = [n for n in fitted_constants() if n != "fp8_efficiency_factor"]
    if any(case.workload.precision is Precision.FP8 for case in cases):
        names.append("fp8_efficiency_factor")
    else:
        # the prior, not the default: the default was fitted on FP8 rows, which may be the
        # very rows a leave-one-family-out fit must not see
        start = replace(start, fp8_efficiency_factor=FP8_EFFICIENCY_PRIOR)
        notes.append(
            "fp8_efficiency_factor not fitted: no FP8 case (kept at its prior "
            f"{FP8_EFFICIENCY_PRIOR:.3g})"
        )

    best, best_value = start, _objective(cases, start)
    evaluations = 1
    centre = {name: float(getattr(start, name)) for name in names}
    width = {name: FIT_BOUNDS[name][1] - FIT_BOUNDS[name][0] for name in names}
    for _refinement in range(3):
        axes = []
        for name in names:
            low = max(FIT_BOUNDS[name][0], centre[name] - width[name] / 2)
            high = min(FIT_BOUNDS[name][1], centre[name] + width[name] / 2)
            axes.append(np.linspace(low, high, points[name]))
        for values in itertools.product(*axes):
            candidate = replace(start, **{n: float(v) for n, v in zip(names, values, strict=True)})
            value = _objective(cases, candidate)
            evaluations += 1
            if value < best_value:
                best, best_value = candidate, value
        centre = {name: float(getattr(best, name)) for name in names}
        width = {name: width[name] / 4 for name in names}

    # where the cases cannot tell values apart (every case's error unchanged), prefer the
    # default over an arbitrary grid point, and report the flat interval
    reference = [s.timing_error_percent for s in score(cases, best)]
    for name in names:
        low, high = FIT_BOUNDS[name]
        same = []
        for value in np.linspace(low, high, 19):
            errors = [s.timing_error_percent for s in score(cases, replace(best, **{name: value}))]
            evaluations += 1
            if np.allclose(errors, reference):
                same.append(float(value))
        default = float(getattr(start, name))
        errors = [s.timing_error_percent for s in score(cases, replace(best, **{name: default}))]
        evaluations += 1
        if same and min(same) <= default <= max(same) and np.allclose(errors, reference):
            best = replace(best, **{name: default})
            notes.append(
                f"{name}: every case's error is the same from about {min(same):.3g} to "
                f"{max(same):.3g} (not identified there): kept at its default {default:g}"
            )

    before, after = score(cases, start), score(cases, best)
    report = FitReport(
        fitted={name: float(getattr(best, name)) for name in FIT_BOUNDS},
        default={name: float(getattr(start, name)) for name in FIT_BOUNDS},
        bounds=dict(FIT_BOUNDS),
        median_before=summary(before, timing=True)["median"],
        max_before=summary(before, timing=True)["max"],
        median_after=summary(after, timing=True)["median"],
        max_after=summary(after, timing=True)["max"],
        evaluations=evaluations,
        notes=tuple(notes),
    )
    return best, report


@dataclass(frozen=True)
class HeldOutGroup:
    """One group of rows (a source family, a GPU generation, a software stack) predicted with
    the constants fitted on every other group's verified rows."""

    name: str
    constants: dict[str, float]  # the fitted constants (FIT_BOUNDS' names) used on it
    scores: tuple[CaseScore, ...]
    # the rows scored, in the order of ``scores``: its verified rows of the fitted set, then
    # its ``blind`` rows (the last ``blind`` of them), which no constant is ever fitted on
    cases: tuple[CalibrationCase, ...] = ()
    blind: int = 0


def leave_one_group_out(
    cases: Sequence[CalibrationCase],
    group: Callable[[CalibrationCase], str],
    blind: Sequence[CalibrationCase] = (),
    base: ModelConstants | None = None,
    grid_points: Mapping[str, int] | None = None,
) -> list[HeldOutGroup]:
    """Each group's rows, predicted by constants fitted (:func:`fit_constants`) on the verified
    rows of ``cases`` outside that group.

    ``blind`` rows are never fitted on; each is scored with its group's constants. A group
    with no verified row in ``cases`` (a GPU generation only the blind tables ran on) is
    scored with ``base`` (``ModelConstants()``, fitted on every verified row, none of them
    its). Rows whose source says VERIFY are neither fitted on nor scored.
    """
    verified = [case for case in cases if case.verified]
    if len({group(case) for case in verified}) < 2:
        raise ValueError("leaving one group out needs verified rows of two groups or more")
    names = sorted({group(case) for case in [*verified, *blind]})
    held_out = []
    for name in names:
        others = [case for case in verified if group(case) != name]
        if len(others) == len(verified):
            fitted = base or ModelConstants()
            constants = {n: float(getattr(fitted, n)) for n in FIT_BOUNDS}
        else:
            fitted, report = fit_constants(others, base, grid_points)
            constants = report.fitted
        mine = [case for case in verified if group(case) == name]
        theirs = [case for case in blind if group(case) == name]
        scored = (*mine, *theirs)
        held_out.append(
            HeldOutGroup(name, constants, tuple(score(scored, fitted)), scored, len(theirs))
        )
    return held_out


def leave_one_family_out(
    cases: Sequence[CalibrationCase],
    base: ModelConstants | None = None,
    grid_points: Mapping[str, int] | None = None,
) -> list[HeldOutGroup]:
    """Each source family's verified rows, predicted by constants fitted without them.

    The honest counterpart of the in-sample figure: the fit (:func:`fit_constants`, the same
    objective and grid) never sees the family it is scored on. Rows whose source says VERIFY
    are neither fitted on nor held out, as in the in-sample figures.
    """
    if len({case.family for case in cases if case.verified}) < 2:
        raise ValueError("leaving one family out needs verified rows of two families or more")
    return leave_one_group_out(cases, lambda case: case.family, (), base, grid_points)


def held_out_table(held_out: Sequence[HeldOutGroup]) -> str:
    """Per family: its rows' timing error with constants fitted on the other families."""
    lines = [
        "| family left out | n | median error % | p90 error % | max error % "
        "| eta_compute_max | matrix_width_half | dp_overlap | fp8_efficiency_factor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    every: list[float] = []
    for group in held_out:
        errors = np.array([s.timing_error_percent for s in group.scores], dtype=np.float64)
        every += errors.tolist()
        c = group.constants
        lines.append(
            f"| {group.name} | {len(errors)} | {np.median(errors):.1f} | "
            f"{np.percentile(errors, 90):.1f} | {np.max(errors):.1f} | "
            f"{c['eta_compute_max']:.3g} | {c['matrix_width_half']:.4g} | {c['dp_overlap']:.3g} "
            f"| {c['fp8_efficiency_factor']:.3g} |"
        )
    pooled = np.array(every, dtype=np.float64)
    lines.append(
        f"| all, each family held out | {len(pooled)} | {np.median(pooled):.1f} | "
        f"{np.percentile(pooled, 90):.1f} | {np.max(pooled):.1f} | | | | |"
    )
    return "\n".join(lines)


HELD_OUT_START = "<!-- held-out:start (generated by python -m bench.model_docs) -->"
HELD_OUT_END = "<!-- held-out:end -->"


def held_out_section(
    cases: Sequence[CalibrationCase],
    held_out: Sequence[HeldOutGroup],
    extra: Sequence[str] = (),
) -> str:
    """The leave-one-family-out block of docs/MODEL.md (slow: one fit per family); ``extra``
    paragraphs (the held-out scaling figures) follow its table."""
    defaults = ModelConstants()
    verified = [case for case in cases if case.verified]
    return "\n".join(
        [
            HELD_OUT_START,
            f"Leave-one-family-out: each source family's {len(verified)} verified rows in all "
            "predicted with `eta_compute_max`, `matrix_width_half`, `dp_overlap` and (where "
            "the other families hold FP8 rows) `fp8_efficiency_factor` fitted "
            "(`fit_constants`, the same objective and grid) on the other families' rows only; "
            "the fit never sees the rows it is scored on, and a family predicted without FP8 "
            f"rows to fit on keeps the FP8 prior {FP8_EFFICIENCY_PRIOR:.3g}. Timing error, "
            "predicted vs published tokens/s per GPU. Fitted from the defaults "
            f"eta_compute_max={defaults.eta_compute_max:g}, "
            f"matrix_width_half={defaults.matrix_width_half:g}, "
            f"dp_overlap={defaults.dp_overlap:g}.",
            "",
            held_out_table(held_out),
            *(line for paragraph in extra for line in ("", paragraph)),
            HELD_OUT_END,
        ]
    )


BLIND_START = "<!-- blind:start (generated by python -m bench.model_docs) -->"
BLIND_END = "<!-- blind:end -->"


def blind_section(
    title: str,
    cases: Sequence[CalibrationCase],
    skipped: Sequence[SkippedRow],
    group: Callable[[CalibrationCase], str],
) -> str:
    """A paragraph of docs/MODEL.md's blind block for one table's published rows no constant
    was fitted on: their timing error with ``ModelConstants()``, overall and by ``group``, and
    why the other rows were left out (the block's markers are the caller's)."""
    scores = score(cases)
    errors = np.array([s.timing_error_percent for s in scores], dtype=np.float64)
    signed = np.array([s.predicted_timing / s.published - 1.0 for s in scores]) * 100.0
    groups: dict[str, list[int]] = {}
    for index, case in enumerate(cases):
        groups.setdefault(group(case), []).append(index)
    lines = [
        f"Blind: {title}. {len(cases)} rows scored with `ModelConstants()`, none of them fitted "
        f"on; {len(skipped)} rows left out. Timing error, predicted vs published tokens/s per "
        "GPU; the signed median says which way the model errs (negative: too slow).",
        "",
        "| rows | n | median error % | p90 error % | max error % | signed median % |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, chosen in [*sorted(groups.items()), ("all", list(range(len(cases))))]:
        e, d = errors[chosen], signed[chosen]
        lines.append(
            f"| {name} | {len(chosen)} | {np.median(e):.1f} | {np.percentile(e, 90):.1f} | "
            f"{np.max(e):.1f} | {np.median(d):+.1f} |"
        )
    reasons: dict[str, int] = {}
    for row in skipped:
        reasons[row.reason] = reasons.get(row.reason, 0) + 1
    lines += [
        "",
        "Left out: "
        + "; ".join(f"{reason} ({n})" for reason, n in sorted(reasons.items(), key=lambda x: -x[1]))
        + ".",
    ]
    return "\n".join(lines)


def replace_block(path: Path, start_marker: str, end_marker: str, block: str) -> None:
    """Put ``block`` (which carries both markers) between the markers of ``path``."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(start_marker), text.index(end_marker) + len(end_marker)
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


# ---- report


def markdown_table(scores: Sequence[CaseScore]) -> str:
    lines = [
        "| run id | GPUs | layout | published tok/s/GPU | predicted | error % | timing error % "
        "| assumptions |",
        "|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for s in scores:
        memory = s.breakdown["memory_gb_per_gpu"]
        predicted = (
            f"{s.predicted:,.0f}"
            if s.fits_memory
            else f"no fit ({memory:.0f} GB; timing {s.predicted_timing:,.0f})"
        )
        notes = "; ".join(s.assumptions).replace("|", "/")
        lines.append(
            f"| {s.run_id} | {s.n_gpus} | {s.layout} | {s.published:,.0f} | {predicted} | "
            f"{s.error_percent:.1f} | {s.timing_error_percent:.1f} | {notes} |"
        )
    return "\n".join(lines)


def family_table(scores: Sequence[CaseScore]) -> str:
    lines = [
        "| family | n | no fit | median error % | max error % | median timing % | max timing % |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    families = sorted({s.family for s in scores})
    for family in [*families, "all", "verified (the targets)"]:
        chosen = [
            s
            for s in scores
            if family in ("all", s.family) or (family.startswith("verified") and s.verified)
        ]
        stats, timing = summary(chosen), summary(chosen, timing=True)
        rejected = sum(not s.fits_memory for s in chosen)
        lines.append(
            f"| {family} | {len(chosen)} | {rejected} | {stats['median']:.1f} | "
            f"{stats['max']:.1f} | {timing['median']:.1f} | {timing['max']:.1f} |"
        )
    return "\n".join(lines)


# The naive baseline: 6 x active parameters FLOPs per token at a fixed share of peak, the
# middle of the 38-52% MFU the published large runs report (model-notes 5.4).
NAIVE_MFU = 0.45


def naive_errors(cases: Sequence[CalibrationCase], mfu: float = NAIVE_MFU) -> list[float]:
    """Absolute percentage errors of tokens/s per GPU = peak x MFU / (6 P_act)."""
    specs = gpu_specs()
    errors = []
    for case in cases:
        spec = specs[resolve_gpu(str(case.hardware["gpu_model"]))]
        peak = (
            spec.fp8_dense_tflops
            if case.workload.precision is Precision.FP8 and spec.fp8_dense_tflops
            else spec.bf16_dense_tflops
        ) * 1e12
        predicted = peak * mfu / (6.0 * case.workload.active_params)
        published = case.published_tokens_per_s_per_gpu
        errors.append(abs(predicted - published) / published * 100.0)
    return errors


def _accuracy_row(name: str, errors: Sequence[float | None]) -> str:
    """One estimator's row; None entries (cases it could not score) are left out of the
    statistics, and the cases column then reads 'scored of all'."""
    values = np.asarray([e for e in errors if e is not None], dtype=np.float64)
    count = str(len(values)) if len(values) == len(errors) else f"{len(values)} of {len(errors)}"
    if not len(values):
        return f"| {name} | {count} | n/a | n/a | 0 | 0 |"
    return (
        f"| {name} | {count} | {np.median(values):.1f} | {np.max(values):.1f} | "
        f"{int((values <= 10).sum())} | {int((values <= 30).sum())} |"
    )


def accuracy_table(
    cases: Sequence[CalibrationCase],
    extra: Sequence[tuple[str, Sequence[float | None]]] = (),
) -> str:
    """The model next to the naive 6ND baseline on the same cases.

    ``extra``: further estimators as (name, absolute percentage errors), one error per case
    in the order of ``cases``, None where that estimator could not score the case.
    """
    model = [s.timing_error_percent for s in score(cases)]
    naive = naive_errors(cases)
    lines = [
        "| estimator | cases | median error % | max error % | within 10% | within 30% |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rows: list[tuple[str, Sequence[float | None]]] = [
        ("fabricscope scaling model", model),
        (f"naive 6·P_act tokens at {NAIVE_MFU:.0%} MFU", naive),
    ]
    for name, errors in extra:
        if len(errors) != len(cases):
            raise ValueError(f"{name}: {len(errors)} errors for {len(cases)} cases")
        rows.append((name, errors))
    lines += [_accuracy_row(name, errors) for name, errors in rows]
    return "\n".join(lines)


DOCS_START = "<!-- validation:start (generated by python -m bench.model_docs) -->"
DOCS_END = "<!-- validation:end -->"


def docs_section(
    cases: Sequence[CalibrationCase],
    skipped: Sequence[SkippedRow],
    extra: Sequence[tuple[str, Sequence[float | None]]] = (),
    extra_notes: Sequence[str] = (),
) -> str:
    """The validation section of docs/MODEL.md, generated from the model's current constants.

    ``extra``: further estimators for the accuracy table (see :func:`accuracy_table`), with
    ``extra_notes`` saying how each was run (bench/model_docs.py adds llm-analysis).
    """
    scores = score(cases)
    stats, timing = summary(scores), summary(scores, timing=True)
    verified = [s for s in scores if s.verified]
    gate = summary(verified)
    unverified = ", ".join(f"{s.run_id} {s.error_percent:.0f}%" for s in scores if not s.verified)
    worst = sorted(scores, key=lambda s: -s.timing_error_percent)[:10]
    return "\n".join(
        [
            DOCS_START,
            f"In-sample: {len(cases)} published runs scored ({len(skipped)} rows skipped, each "
            "with its reason), each with its own layout where it gives one, with "
            "`ModelConstants()`, whose fitted constants were fitted on these very rows: these "
            "figures flatter the model. The held-out figure (each family predicted by "
            "constants fitted without it) is the next block. "
            'Error: predicted vs published tokens/s per GPU. "no fit": the memory model '
            "rejects a layout that ran (scored 100% in the error column; the timing column "
            "scores the prediction anyway).",
            "",
            accuracy_table(cases, extra),
            "",
            *extra_notes,
            "",
            family_table(scores),
            "",
            f"All, in-sample: median error {stats['median']:.1f}%, max {stats['max']:.1f}% "
            f"(timing median "
            f"{timing['median']:.1f}%, max {timing['max']:.1f}%). The {len(verified)} verified "
            f"rows, held to the targets (median 8%, max 30%, every published layout fits): "
            f"median {gate['median']:.1f}%, max {gate['max']:.1f}%, "
            f"{sum(not s.fits_memory for s in verified)} rejected. Rows whose source says "
            f"VERIFY (recalled or second-hand values; scored, not fitted, not held to the "
            f"targets): {unverified or 'none'}.",
            "",
            "Worst ten by timing error:",
            "",
            markdown_table(worst),
            DOCS_END,
        ]
    )


def replace_docs_section(path: Path, section: str) -> None:
    """Put ``section`` (from :func:`docs_section`) between the markers of ``path``."""
    replace_block(path, DOCS_START, DOCS_END, section)


def main() -> None:
    cases, skipped = map_rows()
    print(f"# Scaling model vs published runs ({len(cases)} cases, {len(skipped)} rows skipped)\n")
    print(
        "error: |predicted - published| / published tokens/s per GPU, 100% where the model "
        "rejects the published layout for memory; timing error: the same with the memory "
        "check relaxed for those cases.\n"
    )
    fitted, report = fit_constants(cases)
    for title, scores in (
        ("default ModelConstants()", score(cases)),
        ("fitted constants", score(cases, fitted)),
    ):
        stats, timing = summary(scores), summary(scores, timing=True)
        print(f"## {title}\n")
        print(markdown_table(scores))
        print()
        print(family_table(scores))
        print(
            f"\nn = {int(stats['n'])}: median error {stats['median']:.1f}%, max error "
            f"{stats['max']:.1f}%; timing only: median {timing['median']:.1f}%, max "
            f"{timing['max']:.1f}%\n"
        )
    print("## fitted constants\n")
    print("| constant | default | fitted | bounds |\n|---|---:|---:|---|")
    for name, value in report.fitted.items():
        low, high = report.bounds[name]
        print(f"| {name} | {report.default[name]:g} | {value:.4g} | {low:g}-{high:g} |")
    print(
        f"\ntiming error: median {report.median_before:.1f}% -> {report.median_after:.1f}%, "
        f"max {report.max_before:.1f}% -> {report.max_after:.1f}% "
        f"({report.evaluations} evaluations)"
    )
    for note in report.notes:
        print(f"- {note}")
    print("\n## skipped rows\n")
    for row in skipped:
        print(f"- {row.run_id}: {row.reason}")


DOCS_FILE = Path(__file__).resolve().parents[2] / "docs" / "MODEL.md"

if __name__ == "__main__":
    main()
