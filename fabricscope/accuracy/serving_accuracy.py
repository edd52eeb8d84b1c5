"""The serving model scored on the published serving measurements (issue 36): each case
(fabricscope/accuracy/serving_cases.py) mapped onto a serving workload, a hardware profile and
the layout it ran, estimated, and compared with its measured output tokens per second per GPU.

What is scored now: single-node cases at fixed prompt and output lengths that state their
precision, on GPUs whose specs the model needs are in gpus.csv, at maximum throughput (no
latency target; the batch the model plans is the largest that fits). Everything else is
skipped with its reason: MLPerf's dataset-distributed prompts (their mean input is not in the
sources), multi-node systems, unstated precision, latency-bound scenarios (their queueing is
not modelled yet), GPUs without HBM bandwidth or peak figures.

``fit`` chooses the efficiencies and the runtime's overhead from FIT_GRID, one set for every
case; ``score`` takes any constants, and ``ROOFLINE`` (every efficiency 1, no runtime overhead)
is the plain roofline baseline the issue asks to report beside the model. ``held_out`` and
``report`` give each held-out split (a source, a source family, a GPU generation).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from fabricscope.accuracy.serving_cases import ServingCase, architecture, load_cases
from fabricscope.model.generations import GENERATIONS
from fabricscope.model.hardware import HardwareError, HardwareProfiles
from fabricscope.model.serving import ServingConstants, ServingWorkload, estimate_serving
from fabricscope.model.workload import Workload
from fabricscope.rank import catalog

ROOFLINE = ServingConstants(
    hbm_efficiency=1.0,
    decode_compute_efficiency=1.0,
    prefill_efficiency=1.0,
    sequence_overhead_s=0.0,
)
SCORED_SCENARIOS = frozenset({"offline", "max-throughput"})
SCORED_COLUMNS = [
    "case_id",
    "source_id",
    "gpu_model",
    "model",
    "weights",
    "input_len",
    "output_len",
    "tp",
    "pp",
    "measured",
    "predicted",
    "fits",
    "error",
]


@dataclass(frozen=True)
class Scorable:
    case: ServingCase
    job: ServingWorkload
    profiles: HardwareProfiles  # the one profile it ran on
    tp: int
    pp: int


def _workload(case: ServingCase) -> ServingWorkload:
    known = architecture(case.model)
    shape = dict(known.get("fields", known))  # presets hold their shape under "fields"
    for key in ("architecture", "description", "source", "sources", "note", "notes"):
        shape.pop(key, None)
    context = int((case.input_len or 0) + (case.output_len or 0))
    arch = Workload.model_validate(
        {
            **shape,
            "name": case.model,
            "seq_len": max(context, 1),
            "tokens": 1e12,  # a training field the shape needs; serving reads none of it
            "global_batch_size": 1,
        }
    )
    weights = case.weights_precision
    assert weights is not None
    kv = case.kv_precision or ("fp8" if weights in ("fp8", "fp4") else "bf16")
    return ServingWorkload(
        name=case.model,
        architecture=arch,
        weights=weights,
        kv_cache="fp8" if kv in ("fp8", "fp4") else "bf16",
        input_tokens=int(case.input_len or 1),
        output_tokens=int(case.output_len or 1),
        attention_data_parallel=attention_data_parallel(case),
    )


def layout(case: ServingCase) -> tuple[int, int]:
    """The (TP, PP) a case is scored at. A layout of data-parallel attention and experts over
    n GPUs (TensorRT-LLM's "DEP n": no TP degree, EP and DP n) runs over all n GPUs: it is
    scored as a replica of n GPUs, attention data-parallel (``attention_data_parallel``)."""
    if case.tp is None and case.pp is None and case.ep == case.gpus and case.gpus > 1:
        return case.gpus, 1
    return case.tp or 1, case.pp or 1


def attention_data_parallel(case: ServingCase) -> bool:
    """Whether a case ran attention data-parallel with its experts split over its GPUs: the
    latest page's "DEP n" runs, and the DeepSeek-R1 blog's "attention DP" ones."""
    dep = case.tp is None and case.pp is None and case.ep == case.gpus and case.gpus > 1
    return dep or "attention DP" in case.system


def scorable(cases: Sequence[ServingCase]) -> tuple[list[Scorable], list[tuple[str, str]]]:
    """The cases the model can be scored on now, and each other case with why not."""
    specs = catalog.gpu_specs()
    kept: list[Scorable] = []
    skipped: list[tuple[str, str]] = []
    for case in cases:
        spec = specs.get(case.gpu_model)
        why = None
        if case.scenario not in SCORED_SCENARIOS:
            why = f"scenario {case.scenario}: latency-bound scenarios are not scored yet"
        elif case.input_len is None or case.output_len is None:
            why = "prompt or output length not stated (MLPerf's dataset means are not sourced)"
        elif case.multi_node or case.nodes > 1:
            why = "multi-node system: not scored yet"
        elif case.weights_precision is None:
            why = "precision not stated"
        elif spec is None or not spec.hbm_tbps or not spec.bf16_dense_tflops:
            why = f"{case.gpu_model}: HBM bandwidth or peak not in gpus.csv"
        if why:
            skipped.append((case.case_id, why))
            continue
        try:
            job = _workload(case)
        except (KeyError, ValueError, HardwareError) as exc:
            skipped.append((case.case_id, f"workload: {str(exc).splitlines()[0]}"))
            continue
        tp, pp = layout(case)
        profile = {
            "gpu_model": case.gpu_model,
            "gpu_count": tp * pp,
            "gpus_per_node": tp * pp,
            "fabric_class": "none",
            "fabric_gbps_per_gpu": 0.0,
        }
        kept.append(Scorable(case, job, catalog.build([profile]), tp, pp))
    return kept, skipped


def score(items: Sequence[Scorable], constants: ServingConstants | None = None) -> pd.DataFrame:
    """Predicted against measured output tokens/s per GPU for every scorable case, at the
    layout each ran (its TP and PP)."""
    rows: list[dict[str, object]] = []
    for item in items:
        estimate = estimate_serving(item.job, item.profiles, constants, (item.tp, item.pp))
        predicted = float(estimate.tokens_per_s_per_gpu[0])
        measured = item.case.measured_output_tokens_s_per_gpu
        rows.append(
            {
                "case_id": item.case.case_id,
                "source_id": item.case.source_id,
                "gpu_model": item.case.gpu_model,
                "model": item.case.model,
                "weights": item.case.weights_precision,
                "input_len": item.case.input_len,
                "output_len": item.case.output_len,
                "tp": item.tp,
                "pp": item.pp,
                "measured": measured,
                "predicted": predicted,
                "fits": bool(estimate.fits[0]),
                "error": predicted / measured - 1 if math.isfinite(predicted) else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=SCORED_COLUMNS)


def summary(scored: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Median and p90 absolute error and the signed median, overall or per ``by``."""
    groups = [("all", scored)] if by is None else list(scored.groupby(by))
    out = []
    for name, frame in groups:
        errors = frame["error"].dropna()
        out.append(
            {
                "group": name,
                "cases": len(frame),
                "unplanned": int((~frame["fits"]).sum()),
                "median_abs": float(np.median(np.abs(errors))) if len(errors) else math.nan,
                "p90_abs": float(np.quantile(np.abs(errors), 0.9)) if len(errors) else math.nan,
                "signed_median": float(np.median(errors)) if len(errors) else math.nan,
            }
        )
    return pd.DataFrame(out)


def load_scorable() -> tuple[list[Scorable], list[tuple[str, str]]]:
    return scorable(load_cases())


# the efficiencies tried by the fit (global: one set for every case, never per case)
FIT_GRID: dict[str, tuple[float, ...]] = {
    "hbm_efficiency": (0.5, 0.6, 0.7, 0.8, 1.0),
    "decode_compute_efficiency": (0.3, 0.4, 0.5, 0.6),
    "prefill_efficiency": (0.4, 0.5, 0.6, 0.7, 0.8),
    "sequence_overhead_s": (0.0, 5e-6, 1e-5, 1.5e-5, 2e-5),
}


def _loss(frame: pd.DataFrame) -> float:
    """Mean absolute log ratio of predicted to measured, over the planned cases."""
    planned = frame[frame["fits"]]
    return float(np.mean(np.abs(np.log(planned["predicted"] / planned["measured"]))))


# the cases a fitting worker process scores (set once per process, inherited by fork)
_WORKER_ITEMS: Sequence[Scorable] = ()


def _set_worker_items(items: Sequence[Scorable]) -> None:
    global _WORKER_ITEMS
    _WORKER_ITEMS = items


def _worker_loss(constants: ServingConstants) -> float:
    return _loss(score(_WORKER_ITEMS, constants))


def fit(items: Sequence[Scorable], workers: int | None = None) -> ServingConstants:
    """The constants, from FIT_GRID, that minimise the mean absolute log error over ``items``
    (every combination tried, the first of equal losses kept; the planned set does not depend
    on them). ``workers`` processes share the grid (default: up to two, where the platform
    can fork; one scores it in this process)."""
    names = list(FIT_GRID)
    grid = [
        ServingConstants(**dict(zip(names, values, strict=True)))
        for values in itertools.product(*(FIT_GRID[n] for n in names))
    ]
    if workers is None:
        workers = min(2, os.cpu_count() or 1)
    if workers > 1 and len(grid) > 1 and "fork" in multiprocessing.get_all_start_methods():
        with ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_set_worker_items,
            initargs=(items,),
        ) as pool:
            chunk = max(1, len(grid) // (4 * workers))
            losses = list(pool.map(_worker_loss, grid, chunksize=chunk))
    else:
        losses = [_loss(score(items, constants)) for constants in grid]
    return grid[int(np.argmin(losses))]


# how a held-out split groups the cases: a source (one table version, the blog), a source
# family (MLPerf or the TensorRT-LLM tables), a GPU generation
SPLITS = {
    "source_id": "leave one source out (each table version and the blog)",
    "family": "leave one source family out (MLPerf, TensorRT-LLM)",
    "generation": "leave one GPU generation out (Ampere, Ada, Hopper, Blackwell)",
}


def group_of(item: Scorable, by: str) -> str:
    """The group a case belongs to under a held-out split (``SPLITS``)."""
    if by == "generation":
        generation = GENERATIONS.get(item.case.gpu_model)
        if generation is None:
            raise KeyError(f"{item.case.gpu_model}: no GPU generation in GENERATIONS")
        return generation
    return str(getattr(item.case, by))


def held_out(items: Sequence[Scorable], by: str = "source_id") -> pd.DataFrame:
    """Each group of cases (a source, a source family, a GPU generation) predicted with
    efficiencies fitted on the other groups only: the scored frame of every held-out case
    (empty when there is one group: nothing to fit the others on)."""
    keys = [group_of(item, by) for item in items]
    frames = []
    for group in sorted(set(keys)):
        inside = [i for i, k in zip(items, keys, strict=True) if k == group]
        others = [i for i, k in zip(items, keys, strict=True) if k != group]
        if not others:
            continue
        frames.append(score(inside, fit(others)).assign(held_out=group))
    if not frames:
        return pd.DataFrame(columns=[*SCORED_COLUMNS, "held_out"])
    return pd.concat(frames, ignore_index=True)


def _line(name: str, frame: pd.DataFrame) -> str:
    row = summary(frame).iloc[0]
    planned = int(row["cases"] - row["unplanned"])
    if not planned:
        return f"{name}: no planned case"
    return (
        f"{name}: median {row['median_abs']:.1%}, p90 {row['p90_abs']:.1%}, signed median "
        f"{row['signed_median']:+.1%} ({planned} planned)"
    )


def report() -> str:
    """The figures docs/MODEL.md quotes: the fitted efficiencies, in-sample errors, each
    held-out split (``SPLITS``) overall and per held-out group, each beside the plain roofline
    on the same cases, and the priors."""
    items, skipped = load_scorable()
    fitted = fit(items)
    roofline = score(items, ROOFLINE)
    lines = [
        f"scored {len(items)} cases, skipped {len(skipped)}",
        "fitted: " + ", ".join(f"{name} {getattr(fitted, name)}" for name in FIT_GRID),
        _line("in-sample", score(items, fitted)),
        _line("ServingConstants' defaults", score(items, ServingConstants())),
        _line("plain roofline", roofline),
    ]
    for by, title in SPLITS.items():
        frame = held_out(items, by)
        groups = sorted({group_of(item, by) for item in items})
        if frame.empty:
            lines.append(f"{title}: one group only ({', '.join(groups)}): nothing to hold out")
            continue
        same = roofline[roofline["case_id"].isin(frame["case_id"])]
        lines.append(_line(title, frame) + " | " + _line("roofline", same))
        by_case = roofline.set_index("case_id")
        for group, part in frame.groupby("held_out"):
            base = by_case.loc[part["case_id"]].reset_index()
            lines.append("  " + _line(str(group), part) + " | " + _line("roofline", base))
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
