"""How far to trust an estimate: the model's error on published runs it was not fitted for,
by the kind of job (issue 37 item 6: training; issue 36: serving).

**Training.** The bands come from the held-out residuals of
``fabricscope/accuracy/held_out.py``: each published run (the verified calibration rows and
the blind tables' rows) predicted twice, once with constants refitted without its GPU
generation and once without its software stack, never in-sample. A cell's band is the
``PERCENTILE``th percentile of those predictions' absolute timing error (``percent``: "within
+/-X%" for 9 in 10 of them) and their signed median (``bias_percent``; positive: the model
reads too fast, so a job takes longer than estimated). A cell with fewer than ``MIN_RUNS``
published runs is not used: the lookup falls back to coarser cells (without the stack, then
without dense or MoE, then without precision, then every run) and says which cell it used and
how many runs it holds.

The table is generated, not fitted per run: ``python -m fabricscope.accuracy.held_out
--write-bands`` (or ``python -m bench.model_docs``, with the docs) writes ``error_bands.json``
beside this file, and a test fails when it disagrees with the current model and data
(tests/accuracy/test_held_out.py).

The time a residual implies: a prediction ``signed`` percent too fast means the job takes
``1 + signed / 100`` times the estimate, so a band of X% puts a time between (1 - X/100) and
(1 + X/100) times the estimate; a band of 100% or more bounds it from above only.

**Serving.** The same machinery (a ``Scheme``: the keys, their fallback and their words) over
the serving harness's held-out residuals (``fabricscope/accuracy/serving_accuracy.py``: each
published serving measurement predicted with efficiencies fitted without its source, without
its source family and without its GPU generation): the error of output tokens/s per GPU at
the latency target, the quantity the harness scores. Cells by GPU generation (a GPU of no
known generation, AMD's, by its own model), dense or MoE and weight precision, falling back
in that order from the finest (``SERVING``); ``serving_error_bands.json``, written by ``python
-m fabricscope.accuracy.serving_accuracy --write-bands`` (or ``--write-docs``). A prediction
``signed`` percent too fast means a GPU serves ``1 / (1 + signed / 100)`` of the estimated
tokens/s, each token's GPU time (so its price) ``1 + signed / 100`` times the estimate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from fabricscope.model.generations import GENERATION_NAMES, generation_of
from fabricscope.model.workload import Precision, Workload

BANDS_FILE = Path(__file__).resolve().with_name("error_bands.json")
SERVING_BANDS_FILE = Path(__file__).resolve().with_name("serving_error_bands.json")
FORMAT = 1  # the file's layout; a change of layout is a new number
WRITTEN_BY = "python -m fabricscope.accuracy.held_out --write-bands"
SERVING_WRITTEN_BY = "python -m fabricscope.accuracy.serving_accuracy --write-bands"
# the band is this percentile of the held-out absolute timing errors: 9 in 10 within it
PERCENTILE = 90
# a cell holding fewer published runs falls back to a coarser one
MIN_RUNS = 10
# what a cell is keyed by, finest last
KEYS: tuple[str, ...] = ("generation", "precision", "architecture", "stack")
# the cells a band is looked for in, finest first; the last holds every run
LEVELS: tuple[tuple[str, ...], ...] = tuple(KEYS[:n] for n in range(len(KEYS), -1, -1))
PRECISION_NAMES = {"bf16": "BF16", "fp8": "FP8", "nvfp4": "NVFP4", "fp4": "FP4", "int4": "INT4"}
ARCHITECTURE_NAMES = {"dense": "dense", "moe": "MoE"}
# each key's values as people write them
_NAMES: dict[str, dict[str, str]] = {
    "generation": GENERATION_NAMES,
    "precision": {"bf16": "BF16", "fp8": "FP8", "nvfp4": "NVFP4"},
    "architecture": ARCHITECTURE_NAMES,
    "stack": {"megatron": "Megatron", "fsdp": "FSDP", "eager": "eager PyTorch"},
}


@dataclass(frozen=True, eq=False)
class Scheme:
    """One kind of estimate's bands: what a cell is keyed by, how a cell reads, where the
    table is stored and what its band is of. ``TRAINING`` and ``SERVING`` share the cells,
    the fallback and the lookup; only these differ."""

    keys: tuple[str, ...]  # coarsest first: a cell falls back by dropping the last key
    order: tuple[str, ...]  # the order a cell's values are written in
    names: Mapping[str, Mapping[str, str]]  # each key's values as people write them
    spans: Mapping[str, str]  # each key in words where a cell spans all its values
    joined: Mapping[str, str]  # keys written after a word ("on Megatron"), not beside the rest
    path: Path
    written_by: str
    what: str  # the stored file's own description
    subject: str  # what the band is of, opening its sentence ("" for the time to train)
    runs: str  # what a run is ("published runs", "published serving runs")
    too_fast: str  # what a positive bias means to the buyer
    too_slow: str

    @property
    def levels(self) -> tuple[tuple[str, ...], ...]:
        """The cells a band is looked for in, finest first; the last holds every run."""
        return tuple(self.keys[:n] for n in range(len(self.keys), -1, -1))


TRAINING = Scheme(
    keys=KEYS,
    order=KEYS,
    names=_NAMES,
    spans={
        "generation": "GPU generation",
        "precision": "precision",
        "architecture": "model",
        "stack": "stack",
    },
    joined={"stack": "on"},
    path=BANDS_FILE,
    written_by=WRITTEN_BY,
    what=(
        f"The training model's timing error held out (fabricscope/accuracy/held_out.py: "
        f"each published run predicted with its GPU generation held out and with its "
        f"stack held out): per cell, the p{PERCENTILE} absolute error and the signed median "
        f"(positive: too fast), in percent; a cell of fewer than {MIN_RUNS} runs falls back "
        f"to a coarser one (docs/MODEL.md, Error band)."
    ),
    subject="",
    runs="published runs",
    too_fast="the job likelier takes longer",
    too_slow="the job likelier takes less time",
)
SERVING_KEYS: tuple[str, ...] = ("generation", "architecture", "precision")
SERVING = Scheme(
    keys=SERVING_KEYS,
    order=("generation", "precision", "architecture"),
    names={
        "generation": GENERATION_NAMES,
        "precision": PRECISION_NAMES,
        "architecture": ARCHITECTURE_NAMES,
    },
    spans={"generation": "GPU generation", "precision": "precision", "architecture": "model"},
    joined={},
    path=SERVING_BANDS_FILE,
    written_by=SERVING_WRITTEN_BY,
    what=(
        f"The serving model's error of output tokens/s per GPU at the latency target, held "
        f"out (fabricscope/accuracy/serving_accuracy.py: each published serving measurement "
        f"predicted with efficiencies fitted without its source, without its source family "
        f"and without its GPU generation): per cell, the p{PERCENTILE} absolute error and the "
        f"signed median (positive: too fast), in percent; a cell of fewer than {MIN_RUNS} runs "
        f"falls back to a coarser one (docs/MODEL.md, Serving error band). constants: each "
        f"held-out group's fitted efficiencies, by split."
    ),
    subject="output tokens/s per GPU at the latency target ",
    runs="published serving runs",
    too_fast="a GPU likelier serves fewer tokens/s, each token costing more",
    too_slow="a GPU likelier serves more tokens/s, each token costing less",
)


@dataclass(frozen=True)
class Residual:
    """One held-out prediction of a published run: which cell it belongs to and how far off
    it was (predicted over published tokens/s, less one, in percent: positive is too fast)."""

    run_id: str
    generation: str
    precision: str
    architecture: str  # "dense" or "moe"
    stack: str
    signed_percent: float


@dataclass(frozen=True)
class ServingResidual:
    """One held-out prediction of a published serving measurement (``SERVING``'s keys):
    predicted over measured output tokens/s per GPU, less one, in percent."""

    run_id: str
    generation: str  # the GPU's generation; a GPU of none, its model (``serving_gpu_key``)
    architecture: str  # "dense" or "moe"
    precision: str  # the weights'
    signed_percent: float


def _and(words: list[str]) -> str:
    return f"{', '.join(words[:-1])}{' and ' if len(words) > 1 else ''}{words[-1]}"


def describe(cell: Mapping[str, str | None], scheme: Scheme = TRAINING) -> str:
    """A cell in words: 'Hopper FP8 dense on Megatron', 'Hopper FP8, any model and stack',
    'any GPU generation, precision, model and stack'."""
    named = {k: scheme.names[k].get(v, v) for k, v in cell.items() if v is not None}
    missing = [scheme.spans[k] for k in scheme.order if k not in named]
    if not named:
        return f"any {_and(missing)}"
    what = " ".join(named[k] for k in scheme.order if k in named and k not in scheme.joined)
    for key, word in scheme.joined.items():
        if key in named:
            what += f" {word} {named[key]}"
    return f"{what}, any {_and(missing)}" if missing else what


@dataclass(frozen=True)
class ErrorBand:
    """The held-out error of the model for one kind of job, and where it comes from."""

    percent: float  # the PERCENTILE of the absolute timing error, in percent
    bias_percent: float  # the signed median, in percent (positive: the model reads too fast)
    runs: int  # published runs in the cell used
    predictions: int  # held-out predictions of them (each run is held out twice)
    cell: Mapping[str, str | None]  # the cell used: KEYS, None where it spans every value
    asked: Mapping[str, str | None]  # the job's own cell (generation None: GPU not known)
    scheme: Scheme = field(default=TRAINING, repr=False, compare=False)

    @property
    def label(self) -> str:
        """The cell used in words, with why it is not the job's own: 'Hopper FP8 dense on
        Megatron', or 'Hopper BF16, any model and stack (fewer than 10 held-out runs of
        Hopper BF16 MoE on FSDP)'."""
        used = describe(self.cell, self.scheme)
        if dict(self.cell) == dict(self.asked):
            return used
        if self.asked[self.scheme.keys[0]] is None:
            return f"{used} (the GPU's generation is not known)"
        return (
            f"{used} (fewer than {MIN_RUNS} held-out runs of {describe(self.asked, self.scheme)})"
        )

    def short(self) -> str:
        """'±24%': what a table shows beside a time or a cost."""
        return plus_minus(self.percent)

    def sentence(self) -> str:
        """The band as a buyer reads it, with its percentile, bias and where it comes from."""
        return sentence(self.percent, self.bias_percent, self.label, self.runs, self.scheme)

    def fields(self) -> dict[str, Any]:
        """The band as a ranked row's or an estimate's fields (``FIELDS``)."""
        return {
            "error_band_pct": self.percent,
            "error_bias_pct": self.bias_percent,
            "error_band_runs": self.runs,
            "error_band_cell": self.label,
        }


# a band's fields on a ranked row or an estimate: the band and bias in percent, the published
# runs of the cell used and the cell in words (``ErrorBand.label``)
FIELDS = ("error_band_pct", "error_bias_pct", "error_band_runs", "error_band_cell")
# the time and the GPU time's cost at the band's ends, from the estimate's two fabric ends
RANGE_FIELDS = (
    "time_to_train_h_band_low",
    "time_to_train_h_band_high",
    "cost_usd_band_low",
    "cost_usd_band_high",
)
# a served model's output tokens/s per GPU and USD per million output tokens at the band's ends
SERVING_RANGE_FIELDS = (
    "tokens_per_s_per_gpu_band_low",
    "tokens_per_s_per_gpu_band_high",
    "usd_per_million_output_tokens_band_low",
    "usd_per_million_output_tokens_band_high",
)


def sentence(
    percent: float, bias_percent: float, label: str, runs: int, scheme: Scheme = TRAINING
) -> str:
    """'typically within ±24% for Hopper FP8 dense on Megatron (the p90 of the held-out
    errors on 22 published runs; at the median the model reads 16% too slow (...)'."""
    return (
        f"{scheme.subject}typically within {plus_minus(percent)} for {label}: the "
        f"p{PERCENTILE} of the held-out errors on {runs} {scheme.runs}; "
        f"{bias_words(bias_percent, scheme)}"
    )


def _scaled(value: Any, factor: np.ndarray) -> np.ndarray:
    return np.asarray(value, dtype=np.float64) * factor


def ranges(
    percent: Any, time_h: Any, time_low_h: Any, cost_usd: Any, cost_usd_low: Any
) -> dict[str, np.ndarray]:
    """``RANGE_FIELDS`` for numbers or arrays: the time (and GPU time's cost) at the worse
    fabric end times (1 + band), at the better end times (1 - band); NaN at the low end where
    the band is 100% or more, and wherever the band is unknown."""
    share = np.asarray(percent, dtype=np.float64) / 100.0
    low = np.where(share < 1.0, 1.0 - share, np.nan)
    high = 1.0 + share
    return {
        "time_to_train_h_band_low": _scaled(time_low_h, low),
        "time_to_train_h_band_high": _scaled(time_h, high),
        "cost_usd_band_low": _scaled(cost_usd_low, low),
        "cost_usd_band_high": _scaled(cost_usd, high),
    }


def serving_ranges(
    percent: Any, tokens: Any, tokens_better: Any, usd_per_million: Any
) -> dict[str, np.ndarray]:
    """``SERVING_RANGE_FIELDS`` for numbers or arrays. A prediction X% too fast means a GPU
    serves 1 / (1 + X/100) of it: the tokens/s per GPU at the worse fabric end (``tokens``)
    over (1 + band), at the better end (``tokens_better``) over (1 - band); USD per million
    output tokens (the ranked end's) times (1 - band) to (1 + band), as each token's GPU time
    moves. NaN at the tokens' high end and the price's low end where the band is 100% or more
    (no bound), and wherever the band is unknown."""
    share = np.asarray(percent, dtype=np.float64) / 100.0
    low = np.where(share < 1.0, 1.0 - share, np.nan)
    high = 1.0 + share
    return {
        "tokens_per_s_per_gpu_band_low": _scaled(tokens, 1.0 / high),
        "tokens_per_s_per_gpu_band_high": _scaled(tokens_better, 1.0 / low),
        "usd_per_million_output_tokens_band_low": _scaled(usd_per_million, low),
        "usd_per_million_output_tokens_band_high": _scaled(usd_per_million, high),
    }


def notes(rows: Iterable[Mapping[str, Any]], scheme: Scheme = TRAINING) -> list[str]:
    """One sentence per distinct band among ``rows`` (ranked rows or estimates with
    ``FIELDS``), in their order: what a table's "±" column means for each GPU it shows."""
    seen: dict[tuple[Any, ...], str] = {}
    for row in rows:
        percent, label = row.get("error_band_pct"), row.get("error_band_cell")
        if percent is None or label is None or np.isnan(float(percent)):
            continue
        key = (percent, row["error_bias_pct"], label, row["error_band_runs"])
        if key not in seen:
            seen[key] = sentence(float(percent), float(key[1]), str(label), int(key[3]), scheme)
    return list(seen.values())


def plus_minus(percent: float) -> str:
    return f"±{percent:.0f}%"


def bias_words(bias_percent: float, scheme: Scheme = TRAINING) -> str:
    """The signed median in words: which way the model errs and what it means for the time
    (for a served model, the tokens/s and the price per token)."""
    if round(bias_percent) == 0:
        return "the model errs neither way at the median"
    if bias_percent > 0:
        return f"at the median the model reads {bias_percent:.0f}% too fast ({scheme.too_fast})"
    return f"at the median the model reads {-bias_percent:.0f}% too slow ({scheme.too_slow})"


def band_text(percent: Any, label: Any, runs: Any) -> str:
    """A ranked row's band in one cell: '±24% (Hopper FP8 dense on Megatron, 33 runs held
    out)'; 'unknown' where the row has none."""
    if percent is None or label is None or runs is None or np.isnan(float(percent)):
        return "unknown"
    return f"{plus_minus(float(percent))} ({label}, {int(runs)} runs held out)"


def _plain(value: Any) -> Any:
    """Constants for the record: numbers as floats, nested by split and group."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return float(value)


def table(
    residuals: Iterable[Any], constants: Mapping[str, Any], scheme: Scheme = TRAINING
) -> dict[str, Any]:
    """The stored table (``error_bands.json``) from held-out residuals: every cell of every
    level that holds a run, with its runs, predictions, band and bias; ``constants``: the
    model's fitted constants the residuals were held out from, for the record."""
    items = list(residuals)
    cells: list[dict[str, Any]] = []
    for level in scheme.levels:
        groups: dict[tuple[str, ...], list[Any]] = {}
        for item in items:
            groups.setdefault(tuple(getattr(item, k) for k in level), []).append(item)
        for values in sorted(groups):
            members = groups[values]
            signed = np.array([m.signed_percent for m in members], dtype=np.float64)
            cells.append(
                {
                    **{k: dict(zip(level, values, strict=True)).get(k) for k in scheme.keys},
                    "runs": len({m.run_id for m in members}),
                    "predictions": len(members),
                    "percent": round(float(np.percentile(np.abs(signed), PERCENTILE)), 1),
                    "bias_percent": round(float(np.median(signed)), 1),
                }
            )
    return {
        "format": FORMAT,
        "written_by": scheme.written_by,
        "what": scheme.what,
        "percentile": PERCENTILE,
        "min_runs": MIN_RUNS,
        "keys": list(scheme.keys),
        "constants": _plain(constants),
        "cells": cells,
    }


def dumps(data: Mapping[str, Any]) -> str:
    """The file's text: one cell a line, so that a change reads as a diff of the cells."""
    head = {k: v for k, v in data.items() if k != "cells"}
    lines = json.dumps(head, indent=2).rstrip("}").rstrip()
    cells = ",\n".join(f"    {json.dumps(cell)}" for cell in data["cells"])
    return f'{lines},\n  "cells": [\n{cells}\n  ]\n}}\n'


class BandTable:
    """The stored bands, looked up by a job's cell."""

    def __init__(self, data: Mapping[str, Any], scheme: Scheme = TRAINING) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(
                f"error bands: format {data.get('format')!r}, this code reads {FORMAT}: "
                f"regenerate with {scheme.written_by}"
            )
        self.scheme = scheme
        self.min_runs = int(data["min_runs"])
        self.cells = {tuple(cell[k] for k in scheme.keys): cell for cell in data["cells"]}

    def holds(self, key: str, value: str) -> bool:
        """Whether any held-out run's cell has ``value`` for ``key``."""
        index = self.scheme.keys.index(key)
        return any(cell[index] == value for cell in self.cells)

    def band(self, asked: Mapping[str, str | None]) -> ErrorBand | None:
        """The finest cell around ``asked`` (the scheme's keys; generation None for a GPU of
        no known generation) with at least ``min_runs`` runs; every run's cell whatever it
        holds; None when the table holds no run at all."""
        keys = self.scheme.keys
        for level in self.scheme.levels:
            if any(asked[k] is None for k in level):
                continue
            key = tuple(asked[k] if k in level else None for k in keys)
            cell = self.cells.get(key)
            if cell is None or (level and cell["runs"] < self.min_runs):
                continue
            return ErrorBand(
                percent=float(cell["percent"]),
                bias_percent=float(cell["bias_percent"]),
                runs=int(cell["runs"]),
                predictions=int(cell["predictions"]),
                cell={k: cell[k] for k in keys},
                asked=dict(asked),
                scheme=self.scheme,
            )
        return None


@cache
def _read(path: Path, scheme: Scheme) -> BandTable:
    return BandTable(json.loads(path.read_text(encoding="utf-8")), scheme)


def stored(path: Path = BANDS_FILE) -> BandTable:
    """The training bands shipped with the package (read once)."""
    return _read(path, TRAINING)


def stored_serving(path: Path = SERVING_BANDS_FILE) -> BandTable:
    """The serving bands shipped with the package (read once)."""
    return _read(path, SERVING)


# NVFP4 runs on Blackwell's FP4 tensor cores only; elsewhere the job runs, and is costed, at
# FP8 (BF16 on a GPU without FP8: scaling._nvfp4_gain), and its band is that precision's
NVFP4_ELSEWHERE = {"hopper": "fp8", "ada": "fp8", "ampere": "bf16"}


def job_cell(workload: Workload, generation: str | None) -> dict[str, str | None]:
    """A training job's cell on a GPU of ``generation`` (an NVFP4 job's at the precision it
    runs there: ``NVFP4_ELSEWHERE``)."""
    precision = workload.precision.value
    if workload.precision is Precision.NVFP4 and generation in NVFP4_ELSEWHERE:
        precision = NVFP4_ELSEWHERE[generation]
    return {
        "generation": generation,
        "precision": precision,
        "architecture": "moe" if workload.moe is not None else "dense",
        "stack": workload.stack.value,
    }


def precision_notes(workload: Workload, gpu_models: Iterable[str | None]) -> list[str]:
    """The share of an FP8 or NVFP4 job's linear layers kept off its precision (its
    ``layer_precision``, an nvfp4 job's multi-token-prediction block), and what an NVFP4 job
    runs at on the GPUs without Blackwell's FP4 tensor cores, one line per precision it falls
    back to (none for another precision or on Blackwell only)."""
    notes = _mixed_precision_notes(workload)
    if workload.precision is not Precision.NVFP4:
        return notes
    falls: dict[str, list[str]] = {}
    for gpu in sorted({g for g in gpu_models if g is not None}):
        runs = NVFP4_ELSEWHERE.get(generation_of(gpu) or "")
        if runs is not None:
            falls.setdefault(runs, []).append(gpu)
    return notes + [
        f"nvfp4 runs on Blackwell's FP4 tensor cores only: costed as {runs} on {', '.join(gpus)}"
        for runs, gpus in sorted(falls.items())
    ]


def _mixed_precision_notes(workload: Workload) -> list[str]:
    """One line on the linear layers an FP8 or NVFP4 job runs off its precision, if any."""
    bf16, fp8 = workload.linear_params_bf16, workload.linear_params_fp8
    if not bf16 and not fp8:
        return []
    mtp = workload.mtp_layers * workload.mtp_block_params_active
    linear = workload.active_params - workload.embedding_params + mtp
    shares = [f"{100 * bf16 / linear:.0f}% in BF16"] + (
        [f"{100 * fp8 / linear:.0f}% in FP8"] if fp8 else []
    )
    label = workload.precision_label
    if workload.layer_precision is None:  # an nvfp4 job's MTP block alone
        label += ", its multi-token-prediction block in BF16 (Megatron-Core runs no FP4 in it)"
    return [
        f"precision {label}: of the linear layers' weights a token passes, " + " and ".join(shares)
    ]


def routing_notes(workload: Workload) -> list[str]:
    """What a MoE job's routing is costed as: balanced unless ``moe.load_imbalance`` says
    otherwise; the bands are made of runs whose routing was force-balanced either way."""
    if workload.moe is None:
        return []
    imbalance = workload.moe.load_imbalance
    if imbalance == 1.0:
        return [
            "MoE routing costed as balanced, as NVIDIA's published MoE runs force it (the band "
            "is made of them): give moe.load_imbalance, the most-loaded expert-parallel rank's "
            "routed tokens over the mean, for a run that does not"
        ]
    return [
        f"MoE routing imbalance {imbalance:g}: the most-loaded expert-parallel rank's routed "
        "GEMMs and all-to-all set the step (the band is made of force-balanced runs)"
    ]


def band_for(gpu_model: str | None, workload: Workload) -> ErrorBand | None:
    """The band of ``workload`` trained on ``gpu_model`` (the stored table)."""
    return stored().band(job_cell(workload, generation_of(gpu_model)))


# ---- serving


# what a serving band does not cover: every held-out serving run's replica fit one node (or
# one NVLink domain), so none measured the fabric's terms
SERVING_FABRIC_CAVEAT = (
    "no published serving run the bands are made of crossed a fabric (each replica fit one node "
    "or one NVLink domain), so for a replica that spans nodes the band does not cover the "
    "fabric's terms"
)


def serving_gpu_key(gpu_model: str) -> str:
    """A served GPU's cell key: its generation, or for a GPU of none (AMD's) its own model,
    never a generation guessed from its name."""
    return generation_of(gpu_model) or gpu_model


def serving_cell(job: Any, gpu_key: str | None) -> dict[str, str | None]:
    """A served model's cell (``SERVING``'s keys) on a GPU of key ``gpu_key``
    (``serving_gpu_key``; None: a GPU no held-out run was measured on and of no known
    generation): its weights' precision and whether it is a mixture of experts."""
    return {
        "generation": gpu_key,
        "architecture": "moe" if job.architecture.moe is not None else "dense",
        "precision": str(job.weights),
    }


def serving_band_for(
    gpu_model: str | None, job: Any, bands: BandTable | None = None
) -> ErrorBand | None:
    """The band of serving ``job`` on ``gpu_model`` (default: the stored serving table). A
    GPU of no known generation has its own cells only where runs were measured on it."""
    bands = bands or stored_serving()
    key = None
    if gpu_model is not None:
        key = serving_gpu_key(gpu_model)
        if generation_of(gpu_model) is None and not bands.holds("generation", key):
            key = None
    return bands.band(serving_cell(job, key))
