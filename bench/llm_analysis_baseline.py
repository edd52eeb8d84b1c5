"""llm-analysis (PyPI, by Cheng Li) as a third estimator on the published runs.

Each :class:`~fabricscope.accuracy.validation.CalibrationCase` is rebuilt as llm-analysis's
own config objects (``ModelConfig``, ``GPUConfig``, ``ParallelismConfig``, ``DtypeConfig``) from our
workload, GPU catalogue and fabric: nothing is looked up by name, nothing is fetched from a
hub (``HF_HUB_OFFLINE=1`` is set before the package is imported). llm-analysis runs the
layout the fabricscope model ran for that case (``CaseScore.layout``: tp, pp, dp,
micro-batch, recompute) and its ``training()`` time per iteration (the ``latency_per_iter``
key of the dict it returns) is turned into tokens/s per GPU.

FLOPS efficiency is 0.5, the value the package itself states: its ``llm_analysis/constant.py``
(0.2.2) has ``FLOPS_EFFICIENCY = 1`` with the comment "FLOPS efficiency achieved by
Megatron-LM is ~0.5 for LLM training"; HBM efficiency is 0.9.

What llm-analysis 0.2.2 models for training, read from its ``analysis.py``: time per
iteration = forward + backward (2 x forward) + recompute FLOPs of one micro-batch / (tp x pp
x peak x FLOPS efficiency) x gradient-accumulation steps. It has no pipeline bubble and no
communication in that time (its forward latency breakdown, which does count TP traffic and
HBM, is reported but not used), and its MLP FLOPs are 16 b s h^2 whatever the FFN width or a
gated MLP (``mlp_gated_linear_units`` changes only its activation memory). Its memory check
is kept out of the timing, as the accuracy table does for the fabricscope model: the global
batch is passed with the micro-batch so that ``training()`` does not assert the micro-batch
fits its memory model; whether it fits is recorded on the side.

Optional: when ``llm_analysis`` is not installed, :data:`AVAILABLE` is False and the bench
shows :data:`MISSING` instead of the row. ``fabricscope/`` never imports this module.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata

from fabricscope.accuracy.validation import CalibrationCase, CaseScore
from fabricscope.model.workload import Precision, Recompute, Workload
from fabricscope.rank.catalog import gpu_specs

# No network here, and the package would otherwise reach for the Hugging Face hub (through
# transformers' AutoConfig) for a model name it does not know: we never give it a name.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# transformers 4.31 without torch warns on import that models are unavailable (we need none)
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

try:
    # its CLI dependency fire 0.5 imports the deprecated `pipes` module on Python 3.11+
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
        from llm_analysis.config import DtypeConfig, GPUConfig, ModelConfig, ParallelismConfig
        from llm_analysis.logger import logger as package_logger
except ImportError:
    AVAILABLE = False
else:
    AVAILABLE = True

PACKAGE = "llm-analysis"
INSTALL = "pip install -e .[bench]"
MISSING = (
    f"{PACKAGE} is not installed, so its row is not shown: `{INSTALL}` (or `make bench`) adds it."
)

# "FLOPS efficiency achieved by Megatron-LM is ~0.5 for LLM training" (llm_analysis/constant.py)
FLOPS_EFFICIENCY = 0.5
HBM_MEMORY_EFFICIENCY = 0.9
# every GPU config the package ships (llm_analysis/gpu_configs/*.json) uses 8 us; it enters
# only its forward-latency breakdown, not the training time per iteration
INTRA_NODE_MIN_MESSAGE_LATENCY_S = 8e-06

LAYOUT_KEYS = ("tp", "pp", "dp", "mb", "recompute")


@dataclass(frozen=True)
class LlmAnalysisResult:
    """llm-analysis on one case: a prediction, or the reason there is none."""

    run_id: str
    published: float  # tokens/s per GPU
    predicted: float | None = None  # tokens/s per GPU
    error_percent: float | None = None  # |predicted - published| / published
    fits_memory: bool | None = None  # llm-analysis's own memory check (not scored)
    reason: str = ""  # why there is no prediction


class Unrepresentable(Exception):
    """llm-analysis has no way to express this case; the message says why."""


def version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "not installed"


def row_name() -> str:
    return f"{PACKAGE} {version()} at {FLOPS_EFFICIENCY:.0%} FLOPS efficiency"


def parse_layout(layout: str) -> dict[str, str]:
    """'tp=8,pp=16,dp=8,mb=1,recompute=full,vpp=2' -> {'tp': '8', ...}."""
    fields: dict[str, str] = {}
    for part in layout.split(","):
        key, sep, value = part.partition("=")
        if not sep:
            raise Unrepresentable(f"layout {layout!r} is not key=value pairs")
        fields[key.strip()] = value.strip()
    missing = [key for key in LAYOUT_KEYS if key not in fields]
    if missing:
        raise Unrepresentable(f"layout {layout!r} does not give {', '.join(missing)}")
    return fields


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """llm-analysis logs its whole analysis (INFO and WARNING) and may print: hide both."""
    level = package_logger.level
    package_logger.setLevel(logging.CRITICAL + 1)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        package_logger.setLevel(level)


def _check_representable(workload: Workload) -> None:
    if workload.lora is not None:
        raise Unrepresentable("LoRA fine-tuning: llm-analysis models full training only")
    if workload.moe is not None:
        raise Unrepresentable(
            "mixture of experts: left out (llm-analysis has experts and top-k, but not our "
            "shared experts, expert FFN width, MoE layer share or expert-parallel degree)"
        )
    if workload.precision is not Precision.BF16:
        raise Unrepresentable(
            f"{workload.precision.value} training: llm-analysis's 8-bit dtypes are integer "
            "quantisation at the INT8 peak, not FP8 training"
        )


def _configs(
    case: CalibrationCase, layout: dict[str, str]
) -> tuple[ModelConfig, GPUConfig, ParallelismConfig, DtypeConfig]:
    w = case.workload
    hardware = case.hardware
    spec = gpu_specs()[str(hardware["gpu_model"])]
    model = ModelConfig(
        name=case.run_id,
        num_layers=w.layers,
        n_head=w.heads,
        hidden_dim=w.hidden_size,
        vocab_size=w.vocab_size,
        max_seq_len=w.seq_len,
        num_key_value_heads=w.kv_heads or w.heads,
        ffn_embed_dim=w.ffn,
        # given explicitly: derived, it asserts ffn % hidden == 0 (false for e.g. 3.5 h)
        expansion_ratio=w.ffn / w.hidden_size,
    )
    gpu = GPUConfig(
        name=str(hardware["gpu_model"]),
        mem_per_GPU_in_GB=spec.memory_gb,
        hbm_bandwidth_in_GB_per_sec=spec.hbm_tbps * 1000.0,
        # llm-analysis wants one direction; the catalogue gives NVLink bidirectional
        intra_node_bandwidth_in_GB_per_sec=spec.scaleup_gbps_per_gpu / 2.0,
        intra_node_min_message_latency=INTRA_NODE_MIN_MESSAGE_LATENCY_S,
        peak_fp16_TFLOPS=spec.bf16_dense_tflops,
    )
    fabric_gbps = float(hardware.get("fabric_gbps_per_gpu") or 0.0)
    if fabric_gbps > 0:  # single-node cases have none; the package default then stays
        gpu.inter_node_bandwidth_in_GB_per_sec = fabric_gbps / 8.0
    parallelism = ParallelismConfig(
        tp_size=int(layout["tp"]), pp_size=int(layout["pp"]), dp_size=int(layout["dp"])
    )
    return model, gpu, parallelism, DtypeConfig()  # w16a16e16: BF16 weights and activations


def _recomputation(text: str) -> ActivationRecomputation:
    mapping = {
        Recompute.NONE: ActivationRecomputation.NONE,
        Recompute.SELECTIVE: ActivationRecomputation.SELECTIVE,
        Recompute.FULL: ActivationRecomputation.FULL,
    }
    if text.startswith("block-"):
        # our layout recomputes a share of the layers (Megatron's block method); llm-analysis
        # has no such mode, so it gets full recompute, the closest mode that fits memory
        return ActivationRecomputation.FULL
    try:
        return mapping[Recompute(text)]
    except ValueError:
        raise Unrepresentable(f"recompute {text!r} is not none, selective or full") from None


def predict(case: CalibrationCase, scored: CaseScore) -> tuple[float, bool]:
    """llm-analysis's tokens/s per GPU for ``case`` on the layout ``scored`` ran, and
    whether its memory model fits that layout.

    Raises :class:`Unrepresentable` for a case it cannot express; anything llm-analysis
    itself raises propagates.
    """
    if not AVAILABLE:
        raise RuntimeError(MISSING)
    if scored.run_id != case.run_id:
        raise ValueError(f"score {scored.run_id!r} is not for case {case.run_id!r}")
    w = case.workload
    _check_representable(w)
    layout = parse_layout(scored.layout)
    tp, pp, dp, micro = (int(layout[key]) for key in ("tp", "pp", "dp", "mb"))
    if int(layout.get("cp", 1)) > 1:
        raise Unrepresentable(f"{PACKAGE} has no context parallelism (the run used cp > 1)")
    if tp * pp * dp != case.n_gpus:
        raise Unrepresentable(f"layout {scored.layout} does not cover {case.n_gpus} GPUs")
    if w.batch_sequences % (dp * micro):
        raise Unrepresentable(
            f"global batch {w.batch_sequences} is not a multiple of dp x micro-batch "
            f"{dp * micro}: no whole number of accumulation steps"
        )
    recompute = _recomputation(layout["recompute"])
    model, gpu, parallelism, dtype = _configs(case, layout)
    with _quiet():
        analysis = LLMAnalysis(
            model,
            gpu,
            dtype_config=dtype,
            parallelism_config=parallelism,
            flops_efficiency=FLOPS_EFFICIENCY,
            hbm_memory_efficiency=HBM_MEMORY_EFFICIENCY,
        )
        summary = analysis.training(
            batch_size_per_gpu=micro,
            gradient_accumulation_steps=w.batch_sequences // (dp * micro),
            global_batch_size=w.batch_sequences,
            seq_len=w.seq_len,
            activation_recomputation=recompute,
            ds_zero=DSZeRO(w.zero_stage),
            flash_attn=w.flash_attention,
            softmax_dropout=w.dropout,
            mlp_gated_linear_units=w.gated_mlp,
        )
    seconds_per_iteration = float(summary["latency_per_iter"])
    tokens_per_s_per_gpu = w.batch_tokens / seconds_per_iteration / case.n_gpus
    return tokens_per_s_per_gpu, float(summary["memory_left_per_gpu"]) >= 0


def llm_analysis_results(
    cases: Sequence[CalibrationCase], scores: Sequence[CaseScore]
) -> list[LlmAnalysisResult]:
    """One result per case, in order; ``scores`` is
    :func:`fabricscope.accuracy.validation.score`'s."""
    if len(cases) != len(scores):
        raise ValueError(f"{len(cases)} cases but {len(scores)} scores")
    results: list[LlmAnalysisResult] = []
    for case, scored in zip(cases, scores, strict=True):
        published = case.published_tokens_per_s_per_gpu
        try:
            predicted, fits = predict(case, scored)
        except Unrepresentable as why:
            results.append(LlmAnalysisResult(case.run_id, published, reason=str(why)))
            continue
        except Exception as exc:  # its asserts and arithmetic: that case has no score
            reason = f"llm-analysis raised {type(exc).__name__}: {exc}".strip().rstrip(":")
            results.append(LlmAnalysisResult(case.run_id, published, reason=reason))
            continue
        error = abs(predicted - published) / published * 100.0
        results.append(LlmAnalysisResult(case.run_id, published, predicted, error, fits))
    return results


def llm_analysis_errors(
    cases: Sequence[CalibrationCase], scores: Sequence[CaseScore]
) -> list[float | None]:
    """Absolute percentage error of llm-analysis's tokens/s per GPU for each case, None
    where it raises or cannot represent the case."""
    return [result.error_percent for result in llm_analysis_results(cases, scores)]


def notes(results: Sequence[LlmAnalysisResult]) -> list[str]:
    """Markdown lines under the table: what was run, what was not scored and why."""
    scored = [r for r in results if r.error_percent is not None]
    rejected = [r for r in scored if r.fits_memory is False]
    lines = [
        f"{row_name()}: each run's layout as the fabricscope row ran it (tp, pp, dp, "
        f"micro-batch, recompute), HBM efficiency {HBM_MEMORY_EFFICIENCY:g}, built from our "
        "model, GPU and fabric figures (no hub look-up). Its training time per iteration is "
        "FLOPs / (tp x pp x peak x efficiency) per micro-batch: no pipeline bubble and no "
        "communication. "
        f"{len(scored)} of {len(results)} cases scored; its memory model rejects "
        f"{len(rejected)} of those layouts (scored on timing anyway, as the fabricscope row is).",
    ]
    unscored = [r for r in results if r.error_percent is None]
    if unscored:
        lines.append("")
        lines.append(f"Not scored by {PACKAGE} ({len(unscored)}):")
        lines.append("")
        lines += [f"- {r.run_id}: {r.reason}" for r in unscored]
    return lines
