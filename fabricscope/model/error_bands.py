"""How far to trust a training estimate: the model's error on published runs it was not
fitted for, by GPU generation, precision, dense or MoE, and software stack (issue 37 item 6).

The bands come from the held-out residuals of ``fabricscope/accuracy/held_out.py``: each
published run (the verified calibration rows and the blind tables' rows) predicted twice,
once with constants refitted without its GPU generation and once without its software
stack, never in-sample. A cell's band is the ``PERCENTILE``th percentile of those
predictions' absolute timing error (``percent``: "within +/-X%" for 9 in 10 of them) and
their signed median (``bias_percent``; positive: the model reads too fast, so a job takes
longer than estimated). A cell with fewer than ``MIN_RUNS`` published runs is not used: the
lookup falls back to coarser cells (without the stack, then without dense or MoE, then
without precision, then every run) and says which cell it used and how many runs it holds.

The table is generated, not fitted per run: ``python -m fabricscope.accuracy.held_out
--write-bands`` (or ``python -m bench.model_docs``, with the docs) writes ``error_bands.json``
beside this file, and a test fails when it disagrees with the current model and data
(tests/accuracy/test_held_out.py).

The time a residual implies: a prediction ``signed`` percent too fast means the job takes
``1 + signed / 100`` times the estimate, so a band of X% puts a time between (1 - X/100) and
(1 + X/100) times the estimate; a band of 100% or more bounds it from above only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from fabricscope.model.generations import GENERATION_NAMES, generation_of
from fabricscope.model.workload import Workload

BANDS_FILE = Path(__file__).resolve().with_name("error_bands.json")
FORMAT = 1  # the file's layout; a change of layout is a new number
WRITTEN_BY = "python -m fabricscope.accuracy.held_out --write-bands"
# the band is this percentile of the held-out absolute timing errors: 9 in 10 within it
PERCENTILE = 90
# a cell holding fewer published runs falls back to a coarser one
MIN_RUNS = 10
# what a cell is keyed by, finest last
KEYS: tuple[str, ...] = ("generation", "precision", "architecture", "stack")
# the cells a band is looked for in, finest first; the last holds every run
LEVELS: tuple[tuple[str, ...], ...] = tuple(KEYS[:n] for n in range(len(KEYS), -1, -1))
# each key's values as people write them
_NAMES: dict[str, dict[str, str]] = {
    "generation": GENERATION_NAMES,
    "precision": {"bf16": "BF16", "fp8": "FP8"},
    "architecture": {"dense": "dense", "moe": "MoE"},
    "stack": {"megatron": "Megatron", "fsdp": "FSDP", "eager": "eager PyTorch"},
}


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


def describe(cell: Mapping[str, str | None]) -> str:
    """A cell in words: 'Hopper FP8 dense on Megatron', 'Hopper FP8, any model and stack',
    'any GPU generation, precision, model and stack'."""
    named = {k: _NAMES[k].get(v, v) for k, v in cell.items() if v is not None}
    if not named:
        return "any GPU generation, precision, model and stack"
    what = " ".join(named[k] for k in ("generation", "precision", "architecture") if k in named)
    if "stack" in named:
        return f"{what} on {named['stack']}"
    missing = [
        w for k, w in (("precision", "precision"), ("architecture", "model")) if k not in named
    ]
    missing.append("stack")
    return (
        f"{what}, any {', '.join(missing[:-1])}{' and ' if len(missing) > 1 else ''}{missing[-1]}"
    )


@dataclass(frozen=True)
class ErrorBand:
    """The held-out error of the training model for one kind of job, and where it comes from."""

    percent: float  # the PERCENTILE of the absolute timing error, in percent
    bias_percent: float  # the signed median, in percent (positive: the model reads too fast)
    runs: int  # published runs in the cell used
    predictions: int  # held-out predictions of them (each run is held out twice)
    cell: Mapping[str, str | None]  # the cell used: KEYS, None where it spans every value
    asked: Mapping[str, str | None]  # the job's own cell (generation None: GPU not known)

    @property
    def label(self) -> str:
        """The cell used in words, with why it is not the job's own: 'Hopper FP8 dense on
        Megatron', or 'Hopper BF16, any model and stack (fewer than 10 held-out runs of
        Hopper BF16 MoE on FSDP)'."""
        used = describe(self.cell)
        if dict(self.cell) == dict(self.asked):
            return used
        if self.asked["generation"] is None:
            return f"{used} (the GPU's generation is not known)"
        return f"{used} (fewer than {MIN_RUNS} held-out runs of {describe(self.asked)})"

    def short(self) -> str:
        """'±24%': what a table shows beside a time or a cost."""
        return plus_minus(self.percent)

    def sentence(self) -> str:
        """The band as a buyer reads it, with its percentile, bias and where it comes from."""
        return sentence(self.percent, self.bias_percent, self.label, self.runs)

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


def sentence(percent: float, bias_percent: float, label: str, runs: int) -> str:
    """'typically within ±24% for Hopper FP8 dense on Megatron (the p90 of the held-out
    errors on 22 published runs; at the median the model reads 16% too slow (...)'."""
    return (
        f"typically within {plus_minus(percent)} for {label}: the p{PERCENTILE} of the "
        f"held-out errors on {runs} published runs; {bias_words(bias_percent)}"
    )


def ranges(
    percent: Any, time_h: Any, time_low_h: Any, cost_usd: Any, cost_usd_low: Any
) -> dict[str, np.ndarray]:
    """``RANGE_FIELDS`` for numbers or arrays: the time (and GPU time's cost) at the worse
    fabric end times (1 + band), at the better end times (1 - band); NaN at the low end where
    the band is 100% or more, and wherever the band is unknown."""
    share = np.asarray(percent, dtype=np.float64) / 100.0
    low = np.where(share < 1.0, 1.0 - share, np.nan)
    high = 1.0 + share

    def scaled(value: Any, factor: np.ndarray) -> np.ndarray:
        return np.asarray(value, dtype=np.float64) * factor

    return {
        "time_to_train_h_band_low": scaled(time_low_h, low),
        "time_to_train_h_band_high": scaled(time_h, high),
        "cost_usd_band_low": scaled(cost_usd_low, low),
        "cost_usd_band_high": scaled(cost_usd, high),
    }


def notes(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """One sentence per distinct band among ``rows`` (ranked rows or estimates with
    ``FIELDS``), in their order: what a table's "±" column means for each GPU it shows."""
    seen: dict[tuple[Any, ...], str] = {}
    for row in rows:
        percent, label = row.get("error_band_pct"), row.get("error_band_cell")
        if percent is None or label is None or np.isnan(float(percent)):
            continue
        key = (percent, row["error_bias_pct"], label, row["error_band_runs"])
        if key not in seen:
            seen[key] = sentence(float(percent), float(key[1]), str(label), int(key[3]))
    return list(seen.values())


def plus_minus(percent: float) -> str:
    return f"±{percent:.0f}%"


def bias_words(bias_percent: float) -> str:
    """The signed median in words: which way the model errs and what it means for the time."""
    if round(bias_percent) == 0:
        return "the model errs neither way at the median"
    if bias_percent > 0:
        return (
            f"at the median the model reads {bias_percent:.0f}% too fast (the job likelier takes "
            "longer)"
        )
    return (
        f"at the median the model reads {-bias_percent:.0f}% too slow (the job likelier takes "
        "less time)"
    )


def band_text(percent: Any, label: Any, runs: Any) -> str:
    """A ranked row's band in one cell: '±24% (Hopper FP8 dense on Megatron, 33 runs held
    out)'; 'unknown' where the row has none."""
    if percent is None or label is None or runs is None or np.isnan(float(percent)):
        return "unknown"
    return f"{plus_minus(float(percent))} ({label}, {int(runs)} runs held out)"


def table(residuals: Iterable[Residual], constants: Mapping[str, float]) -> dict[str, Any]:
    """The stored table (``error_bands.json``) from held-out residuals: every cell of every
    level that holds a run, with its runs, predictions, band and bias; ``constants``: the
    model's fitted constants the residuals were held out from, for the record."""
    items = list(residuals)
    cells: list[dict[str, Any]] = []
    for level in LEVELS:
        groups: dict[tuple[str, ...], list[Residual]] = {}
        for item in items:
            groups.setdefault(tuple(getattr(item, k) for k in level), []).append(item)
        for values in sorted(groups):
            members = groups[values]
            signed = np.array([m.signed_percent for m in members], dtype=np.float64)
            cells.append(
                {
                    **{k: dict(zip(level, values, strict=True)).get(k) for k in KEYS},
                    "runs": len({m.run_id for m in members}),
                    "predictions": len(members),
                    "percent": round(float(np.percentile(np.abs(signed), PERCENTILE)), 1),
                    "bias_percent": round(float(np.median(signed)), 1),
                }
            )
    return {
        "format": FORMAT,
        "written_by": WRITTEN_BY,
        "what": (
            f"The training model's timing error held out (fabricscope/accuracy/held_out.py: "
            f"each published run predicted with its GPU generation held out and with its "
            f"stack held out): per cell, the p{PERCENTILE} absolute error and the signed median "
            f"(positive: too fast), in percent; a cell of fewer than {MIN_RUNS} runs falls back "
            f"to a coarser one (docs/MODEL.md, Error band)."
        ),
        "percentile": PERCENTILE,
        "min_runs": MIN_RUNS,
        "keys": list(KEYS),
        "constants": {k: float(v) for k, v in constants.items()},
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

    def __init__(self, data: Mapping[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(
                f"error bands: format {data.get('format')!r}, this code reads {FORMAT}: "
                f"regenerate with {WRITTEN_BY}"
            )
        self.min_runs = int(data["min_runs"])
        self.cells = {tuple(cell[k] for k in KEYS): cell for cell in data["cells"]}

    def band(self, asked: Mapping[str, str | None]) -> ErrorBand | None:
        """The finest cell around ``asked`` (KEYS; generation None for a GPU of no known
        generation) with at least ``min_runs`` runs; every run's cell whatever it holds;
        None when the table holds no run at all."""
        for level in LEVELS:
            if any(asked[k] is None for k in level):
                continue
            key = tuple(asked[k] if k in level else None for k in KEYS)
            cell = self.cells.get(key)
            if cell is None or (level and cell["runs"] < self.min_runs):
                continue
            return ErrorBand(
                percent=float(cell["percent"]),
                bias_percent=float(cell["bias_percent"]),
                runs=int(cell["runs"]),
                predictions=int(cell["predictions"]),
                cell={k: cell[k] for k in KEYS},
                asked=dict(asked),
            )
        return None


@cache
def stored(path: Path = BANDS_FILE) -> BandTable:
    """The bands shipped with the package (read once)."""
    return BandTable(json.loads(path.read_text(encoding="utf-8")))


def job_cell(workload: Workload, generation: str | None) -> dict[str, str | None]:
    """A training job's cell on a GPU of ``generation``."""
    return {
        "generation": generation,
        "precision": workload.precision.value,
        "architecture": "moe" if workload.moe is not None else "dense",
        "stack": workload.stack.value,
    }


def band_for(gpu_model: str | None, workload: Workload) -> ErrorBand | None:
    """The band of ``workload`` trained on ``gpu_model`` (the stored table)."""
    return stored().band(job_cell(workload, generation_of(gpu_model)))
