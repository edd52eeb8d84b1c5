"""The serving model scored on the published serving measurements (issue 36): each case
(fabricscope/accuracy/serving_cases.py) mapped onto a serving workload, a hardware profile and
the layout it ran, estimated, and compared with its measured output tokens per second per GPU.

What is scored: the TensorRT-LLM tables' maximum-throughput cases at fixed prompt and output
lengths, and MLPerf Inference's closed-division cases, whose prompts are their dataset's
(ten equal-count buckets of prompt lengths, each given the results' mean output; the lengths
are a third party's derivation from the official dataset files, serving_cases.py): Offline at
maximum throughput, Server and Interactive at the most throughput that meets the logged p99
time-to-first-token and time-per-output-token bounds (``latency_percentile="p99"``). Each case
runs at its stated layout (TP, PP; EP as data-parallel attention) or, where the submission
states none or several, at the layout the model finds best on the measured system (every GPU,
its nodes, its NVLink domain: an NVL72 rack's 72 GPUs are one). Everything else is skipped with
its reason: open division, unstated precision or output length, TensorRT-LLM's online table,
GPUs without HBM bandwidth or peak figures.

``fit`` chooses the efficiencies and the runtime's overhead from FIT_GRID, one set for every
case; ``score`` takes any constants, and ``ROOFLINE`` (every efficiency 1 of the datasheet
peaks, no runtime overhead) is the plain roofline baseline the issue asks to report beside the
model. ``held_out`` and ``report`` give each held-out split (a source, a source family, a GPU
generation), MLPerf by scenario and multi-node against single-node.

The same held-out predictions make the error band shown beside every serving estimate
(:mod:`fabricscope.model.error_bands`, ``SERVING``): ``python -m
fabricscope.accuracy.serving_accuracy --write-bands`` fits every split and writes
``fabricscope/model/serving_error_bands.json``; ``--write-docs`` writes it too, from the
report's own fits.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import os
import re
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fabricscope.accuracy.serving_cases import ServingCase, architecture, load_cases
from fabricscope.model import error_bands
from fabricscope.model.generations import GENERATIONS
from fabricscope.model.hardware import HardwareError, HardwareProfiles
from fabricscope.model.serving import (
    LengthClass,
    ServingConstants,
    ServingWorkload,
    estimate_serving,
)
from fabricscope.model.workload import Workload
from fabricscope.rank import catalog

ROOFLINE = ServingConstants(
    hbm_efficiency=1.0,
    decode_compute_efficiency=1.0,
    prefill_efficiency=1.0,
    sequence_overhead_s=0.0,
    at_matmul_ceiling=False,
)
SCORED_SCENARIOS = frozenset({"offline", "max-throughput"})
# MLPerf's scenarios with p99 latency bounds, scored at the most throughput that meets them
LATENCY_BOUND = frozenset({"server", "interactive"})
SCORED_COLUMNS = [
    "case_id",
    "source_id",
    "family",
    "scenario",
    "multi_node",
    "gpu_model",
    "model",
    "weights",
    "input_len",
    "output_len",
    "layout",
    "tp",
    "pp",
    "measured",
    "predicted",
    "fits",
    "fabric_share",
    "error",
]
# GPUs of NVIDIA's rack-scale NVLink systems: every GPU of a GB200 or GB300 NVL72 rack (18 trays
# of 4) is in one NVLink domain, as are CoreWeave's GB300 NVL8's two trays (the submission's
# "5th-gen NVLink and NVLink Switches")
NVLINK_RACK_GPUS = frozenset({"GB200-NVL-186GB", "GB300-NVL-288GB"})
# the fabric between a multi-node system's servers, from the submissions' networking fields;
# the layouts scored never cross it (a replica fits one NVLink domain), so nothing reads more
# than that it exists: (fabric class, Gb/s per GPU, why)
MULTI_NODE_FABRICS: dict[bool, tuple[str, float, str]] = {
    True: (
        "infiniband",
        400.0,
        "NVL72 rack: trays joined by NVLink; host networking 'Ethernet(IPoIB)/Infiniband' "
        "read as InfiniBand at 400 Gb/s per GPU (the rate is not stated; no layout crosses it)",
    ),
    False: (
        "roce",
        400.0,
        "servers over Ethernet (Cisco: 8x ConnectX-7 400 Gb/s compute NICs, 'Ethernet Fabric'; "
        "MangoBoost: '400G Ethernet' on a switching network) read as RoCE at 400 Gb/s per GPU",
    ),
}


@dataclass(frozen=True)
class Scorable:
    case: ServingCase
    job: ServingWorkload
    profiles: HardwareProfiles  # the one system it ran on: every GPU, its nodes
    tp: int | None  # the stated layout; None: searched on the system (not stated, or several)
    pp: int | None


def _workload(case: ServingCase) -> ServingWorkload:
    known = architecture(case.model)
    shape = dict(known.get("fields", known))  # presets hold their shape under "fields"
    for key in ("architecture", "description", "source", "sources", "note", "notes"):
        shape.pop(key, None)
    longest = max((t for t, _ in case.input_mix or ()), default=case.input_len or 0)
    context = int(round(longest) + (case.output_len or 0))
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
    bounded = case.family == "mlperf" and case.scenario in LATENCY_BOUND
    lengths: dict[str, object]
    if case.input_mix:
        # the dataset's prompt buckets, each with the results' mean output (the only output
        # length stated)
        output = max(1, round(case.output_len or 1))
        lengths = {
            "mix": tuple(
                LengthClass(input_tokens=max(1, round(tokens)), output_tokens=output, share=share)
                for tokens, share in case.input_mix
            )
        }
    else:
        lengths = {
            "input_tokens": int(case.input_len or 1),
            "output_tokens": int(case.output_len or 1),
        }
    return ServingWorkload(
        name=case.model,
        architecture=arch,
        weights=weights,
        kv_cache="fp8" if kv in ("fp8", "fp4") else "bf16",
        attention_data_parallel=attention_data_parallel(case),
        # MLPerf's bounds hold for 99% of requests (loadgen's target_latency_percentile 99)
        ttft_ms=case.ttft_limit_ms if bounded else None,
        tpot_ms=case.tpot_limit_ms if bounded else None,
        latency_percentile="p99" if bounded else "mean",
        **lengths,  # type: ignore[arg-type]
    )


def layout(case: ServingCase) -> tuple[int, int] | None:
    """The (TP, PP) a case is scored at, None where the source states none (or several: the
    layout is then searched). A layout of data-parallel attention and experts over n GPUs
    (TensorRT-LLM's "DEP n": no TP degree, EP and DP n) runs over all n GPUs: it is scored as
    a replica of n GPUs, attention data-parallel (``attention_data_parallel``)."""
    if case.tp is None and case.pp is None and case.ep == case.gpus and case.gpus > 1:
        return case.gpus, 1
    if case.family == "mlperf" and case.tp is None:
        return None
    return case.tp or 1, case.pp or 1


def attention_data_parallel(case: ServingCase) -> bool:
    """Whether a case ran attention data-parallel with its experts split over its GPUs: the
    latest page's "DEP n" runs, the DeepSeek-R1 blog's "attention DP" ones, and MLPerf's
    DeepSeek-R1 (every one of its 14 harness configs in the v5.1 submissions sets
    ``enable_attention_dp: True``; shared data raw/mlperf_inf_v5.1_nvidia_harness_configs.txt)."""
    dep = case.tp is None and case.pp is None and case.ep == case.gpus and case.gpus > 1
    mlperf_r1 = case.family == "mlperf" and case.model == "deepseek-v3"
    return dep or mlperf_r1 or "attention DP" in case.system


def system_profile(case: ServingCase) -> dict[str, object]:
    """The measured system as a hardware profile: every GPU, its servers (or an NVL rack's
    trays, one NVLink domain) and, across servers, the fabric (MULTI_NODE_FABRICS)."""
    per_node = max(1, case.gpus // max(case.nodes, 1))
    rack = case.gpu_model in NVLINK_RACK_GPUS
    row: dict[str, object] = {
        "gpu_model": case.gpu_model,
        "gpu_count": case.gpus,
        "gpus_per_node": per_node,
        "fabric_class": "none",
        "fabric_gbps_per_gpu": 0.0,
        "nvlink_domain_gpus": case.gpus if rack else per_node,
    }
    if case.nodes > 1:
        fabric, gbps, _ = MULTI_NODE_FABRICS[rack]
        row |= {"fabric_class": fabric, "fabric_gbps_per_gpu": gbps}
    return row


def scorable(cases: Sequence[ServingCase]) -> tuple[list[Scorable], list[tuple[str, str]]]:
    """The cases the model can be scored on now, and each other case with why not."""
    specs = catalog.gpu_specs()
    kept: list[Scorable] = []
    skipped: list[tuple[str, str]] = []
    for case in cases:
        spec = specs.get(case.gpu_model)
        why = None
        bounded = case.family == "mlperf" and case.scenario in LATENCY_BOUND
        if case.scenario not in SCORED_SCENARIOS and not bounded:
            why = f"scenario {case.scenario}: not a maximum-throughput or MLPerf-bounded run"
        elif case.division == "open":
            why = "MLPerf open division: only the closed division is scored"
        elif case.output_len is None:
            why = "mean output tokens per sample not stated"
        elif case.input_len is None:
            why = "prompt length not stated"
        elif case.weights_precision is None:
            why = "precision not stated"
        elif spec is None or not spec.hbm_tbps or not spec.bf16_dense_tflops:
            why = f"{case.gpu_model}: HBM bandwidth or peak not in gpus.csv"
        if why:
            skipped.append((case.case_id, why))
            continue
        try:
            job = _workload(case)
            profiles = catalog.build([system_profile(case)])
        except (KeyError, ValueError, HardwareError) as exc:
            skipped.append((case.case_id, f"workload: {str(exc).splitlines()[0]}"))
            continue
        stated = layout(case)
        tp, pp = stated if stated else (None, None)
        kept.append(Scorable(case, job, profiles, tp, pp))
    return kept, skipped


def score(items: Sequence[Scorable], constants: ServingConstants | None = None) -> pd.DataFrame:
    """Predicted against measured output tokens/s per GPU for every scorable case, at the
    layout each ran (its TP and PP) or, where unstated, the best the model finds."""
    rows: list[dict[str, object]] = []
    for item in items:
        fixed = (item.tp, item.pp) if item.tp is not None and item.pp is not None else None
        estimate = estimate_serving(item.job, item.profiles, constants, fixed)
        predicted = float(estimate.tokens_per_s_per_gpu[0])
        measured = item.case.measured_output_tokens_s_per_gpu
        found = bool(estimate.fits[0])
        rows.append(
            {
                "case_id": item.case.case_id,
                "source_id": item.case.source_id,
                "family": item.case.family,
                "scenario": item.case.scenario,
                "multi_node": item.case.multi_node,
                "gpu_model": item.case.gpu_model,
                "model": item.case.model,
                "weights": item.case.weights_precision,
                "input_len": item.case.input_len,
                "output_len": item.case.output_len,
                "layout": "stated" if fixed else "searched",
                "tp": int(estimate.tp[0]) if found else item.tp,
                "pp": int(estimate.pp[0]) if found else item.pp,
                "measured": measured,
                "predicted": predicted,
                "fits": found,
                "fabric_share": float(estimate.fabric_share[0]),
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
    "decode_compute_efficiency": (0.4, 0.5, 0.6, 0.7),
    "prefill_efficiency": (0.6, 0.7, 0.8, 0.9, 1.0),
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
    "source_id": "leave one source out (each table version, the blog, each MLPerf round)",
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


def in_split(item: Scorable, by: str) -> bool:
    """Whether a case takes part in a split: by GPU generation, only GPUs with one (AMD's
    MI300X and MI325X have none in GENERATIONS, and none is guessed)."""
    return by != "generation" or item.case.gpu_model in GENERATIONS


def held_out_fits(
    items: Sequence[Scorable],
    by: str = "source_id",
    given: Mapping[str, ServingConstants] | None = None,
) -> tuple[pd.DataFrame, dict[str, ServingConstants]]:
    """Each group of cases (a source, a source family, a GPU generation) predicted with
    efficiencies fitted on the other groups only: the scored frame of every held-out case
    (empty when there is one group: nothing to fit the others on), and each group's fit
    (``given``: those constants instead of fitting, to reproduce a report)."""
    items = [item for item in items if in_split(item, by)]
    keys = [group_of(item, by) for item in items]
    frames = []
    fits: dict[str, ServingConstants] = {}
    for group in sorted(set(keys)):
        inside = [i for i, k in zip(items, keys, strict=True) if k == group]
        others = [i for i, k in zip(items, keys, strict=True) if k != group]
        if not others:
            continue
        fits[group] = given[group] if given is not None else fit(others)
        frames.append(score(inside, fits[group]).assign(held_out=group))
    if not frames:
        return pd.DataFrame(columns=[*SCORED_COLUMNS, "held_out"]), fits
    return pd.concat(frames, ignore_index=True), fits


def held_out(items: Sequence[Scorable], by: str = "source_id") -> pd.DataFrame:
    """The scored frame of :func:`held_out_fits`."""
    return held_out_fits(items, by)[0]


def _line(name: str, frame: pd.DataFrame) -> str:
    row = summary(frame).iloc[0]
    planned = int(row["cases"] - row["unplanned"])
    if not planned:
        return f"{name}: no planned case"
    return (
        f"{name}: median {row['median_abs']:.1%}, p90 {row['p90_abs']:.1%}, signed median "
        f"{row['signed_median']:+.1%} ({planned} planned)"
    )


def _constants(constants: ServingConstants) -> str:
    return ", ".join(f"{name} {getattr(constants, name):g}" for name in FIT_GRID)


def _beside(name: str, frame: pd.DataFrame, roofline: pd.DataFrame) -> str:
    """A frame's figures and the roofline's on the same cases."""
    same = roofline[roofline["case_id"].isin(frame["case_id"])]
    return _line(name, frame) + " | " + _line("roofline", same)


FAMILY_NAMES = {"mlperf": "MLPerf", "trtllm": "TensorRT-LLM"}


def _family_lines(
    frame: pd.DataFrame, fits: dict[str, ServingConstants], roofline: pd.DataFrame
) -> list[str]:
    """Each family predicted with constants fitted on the other only; MLPerf by scenario and
    multi-node against single-node."""
    lines = []
    for family, part in frame.groupby("held_out"):
        other = FAMILY_NAMES[next(f for f in FAMILY_NAMES if f != family)]
        lines.append(
            "  " + _beside(f"{FAMILY_NAMES[str(family)]} (fitted on {other} only)", part, roofline)
        )
        lines.append(
            f"    [family] {family} {FITTED_ON}{other} only: {_constants(fits[str(family)])}"
        )
    mlperf = frame[frame["held_out"] == "mlperf"]
    for scenario, part in mlperf.groupby("scenario"):
        lines.append("    " + _beside(f"MLPerf {scenario}", part, roofline))
    for multi, part in mlperf.groupby("multi_node"):
        name = "MLPerf multi-node" if multi else "MLPerf single-node"
        lines.append("    " + _beside(name, part, roofline))
    return lines


def fabric_lines(items: Sequence[Scorable], scored: pd.DataFrame) -> list[str]:
    """Each multi-node MLPerf case: its measured output tokens/s per GPU against the median
    single-node case of the same GPU, model, precision, scenario and round (the fabric's
    cost, measured), the layout the model chose, its prediction and the fabric's share."""
    cases = {i.case.case_id: i.case for i in items}
    frame = scored.assign(
        key=[
            (c.gpu_model, c.model, c.weights_precision, c.scenario, c.source_id)
            for c in (cases[i] for i in scored["case_id"])
        ],
        system=[cases[i].system for i in scored["case_id"]],
    )
    single = frame[~frame["multi_node"]].groupby("key")["measured"].median()
    lines = []
    for _, row in frame[frame["multi_node"] & (frame["family"] == "mlperf")].iterrows():
        alone = single.get(row["key"])
        against = f"{row['measured'] / alone:.2f}x one node's" if alone else "no one-node twin"
        layout = f"TP {row['tp']} PP {row['pp']} ({row['layout']})"
        lines.append(
            f"  {row['system']}, {row['model']} {row['scenario']}: measured "
            f"{row['measured']:,.0f}/GPU ({against}), predicted {row['predicted']:,.0f} "
            f"({row['error']:+.1%}) at {layout}, fabric share {row['fabric_share']:.0%}"
        )
    return lines


FITTED_ON = "fitted on "
CONSTANTS_LINE = re.compile(
    r"^\s*(?:\[(?P<split>[a-z_]+)\] (?P<group>\S+) )?fitted on [^:]*: (?P<values>.*)$"
)


def report(
    fitted: ServingConstants | None = None,
    split_fits: Mapping[str, Mapping[str, ServingConstants]] | None = None,
) -> str:
    """The figures docs/MODEL.md quotes: the fitted efficiencies, in-sample errors, each
    held-out split (``SPLITS``) overall and per held-out group with the constants fitted on
    the other groups, each beside the plain roofline on the same cases; the family split both
    ways, MLPerf by scenario and by node count; the multi-node cases one by one. With
    ``fitted`` and ``split_fits`` (read back from a report by :func:`report_fits`) no fit
    runs: the same text from the same constants, in seconds."""
    items, skipped = load_scorable()
    fitted = fitted or fit(items)
    roofline = score(items, ROOFLINE)
    in_sample = score(items, fitted)
    defaults = score(items, ServingConstants())
    families = in_sample["family"].value_counts()
    lines = [
        f"scored {len(items)} cases ({families.get('trtllm', 0)} TensorRT-LLM, "
        f"{families.get('mlperf', 0)} MLPerf), skipped {len(skipped)}",
        "MLPerf prompts: each dataset's ten equal-count buckets of prompt lengths "
        "(fixtures/published_runs/serving/mlperf_dataset_input_lengths.csv, derived from Red "
        "Hat PSAP's per-sample tables of the official dataset files: a third party's, not "
        "MLCommons'), each with the results' mean output",
        f"{FITTED_ON}both families: " + _constants(fitted),
        _beside("in-sample (both families)", in_sample, roofline),
    ]
    for family, name in FAMILY_NAMES.items():
        lines.append("  " + _beside(name, in_sample[in_sample["family"] == family], roofline))
    lines += [
        _beside("ServingConstants' defaults (fitted on TensorRT-LLM)", defaults, roofline),
        _line("plain roofline", roofline),
    ]
    for by, title in SPLITS.items():
        given = (split_fits or {}).get(by) if split_fits is not None else None
        frame, fits = held_out_fits(items, by, given)
        groups = sorted({group_of(item, by) for item in items if in_split(item, by)})
        if frame.empty:
            lines.append(f"{title}: one group only ({', '.join(groups)}): nothing to hold out")
            continue
        lines.append(_beside(title, frame, roofline))
        if by == "family":
            lines += _family_lines(frame, fits, roofline)
            continue
        for group, part in frame.groupby("held_out"):
            lines.append("  " + _beside(str(group), part, roofline))
            lines.append(
                f"    [{by}] {group} {FITTED_ON}the others: {_constants(fits[str(group)])}"
            )
    lines.append("MLPerf multi-node cases (in-sample fit):")
    lines += fabric_lines(items, in_sample)
    return "\n".join(lines)


def _parse_constants(values: str) -> ServingConstants:
    pairs = dict(part.rsplit(" ", 1) for part in values.split(", "))
    return ServingConstants(**{name: float(pairs[name]) for name in FIT_GRID})


def report_fits(
    text: str,
) -> tuple[ServingConstants, dict[str, dict[str, ServingConstants]]]:
    """The constants a report printed: the fit on both families and each held-out group's."""
    fitted = None
    split_fits: dict[str, dict[str, ServingConstants]] = {by: {} for by in SPLITS}
    for line in text.splitlines():
        found = CONSTANTS_LINE.match(line)
        if not found:
            continue
        constants = _parse_constants(found["values"])
        if found["split"]:
            split_fits[found["split"]][found["group"]] = constants
        elif line.startswith(f"{FITTED_ON}both families"):
            fitted = constants
    if fitted is None:
        raise ValueError("the report names no fit on both families")
    return fitted, split_fits


# docs/MODEL.md's serving section holds the report between these markers
DOCS_FILE = Path(__file__).resolve().parents[2] / "docs" / "MODEL.md"
DOCS_START = (
    "<!-- serving-accuracy:start (generated by python -m fabricscope.accuracy.serving_accuracy "
    "--write-docs) -->"
)
DOCS_END = "<!-- serving-accuracy:end -->"


def docs_block(text: str) -> str:
    """The report as docs/MODEL.md holds it, markers included."""
    return "\n".join([DOCS_START, "```", text.rstrip(), "```", DOCS_END])


def read_docs_report(path: Path = DOCS_FILE) -> str:
    """The report docs/MODEL.md holds (between the markers, without the fence)."""
    text = path.read_text(encoding="utf-8")
    if DOCS_START not in text or DOCS_END not in text:
        raise ValueError(f"{path.name} holds no serving accuracy block ({DOCS_START})")
    inner = text[text.index(DOCS_START) + len(DOCS_START) : text.index(DOCS_END)]
    return inner.strip().removeprefix("```").removesuffix("```").strip("\n")


def write_docs(text: str, path: Path = DOCS_FILE) -> None:
    """Put the report between the markers in ``path`` (which must hold them)."""
    current = path.read_text(encoding="utf-8")
    if DOCS_START not in current or DOCS_END not in current:
        raise ValueError(f"{path.name} holds no serving accuracy block ({DOCS_START})")
    before = current[: current.index(DOCS_START)]
    after = current[current.index(DOCS_END) + len(DOCS_END) :]
    path.write_text(before + docs_block(text) + after, encoding="utf-8")


# ---- the error band beside every serving estimate (fabricscope/model/error_bands.py)


def band_residuals(
    items: Sequence[Scorable], frames: Mapping[str, pd.DataFrame]
) -> list[error_bands.ServingResidual]:
    """Every held-out prediction of each split (``frames``: :func:`held_out_fits`' scored
    frames by split), in its case's cell: the GPU's generation (a GPU of none, AMD's, by its
    model), dense or MoE, the weights' precision. A case is predicted once per split it takes
    part in; a prediction without a plan (no finite error) is left out."""
    cases = {item.case.case_id: item for item in items}
    found = []
    for frame in frames.values():
        for case_id, error in zip(frame["case_id"], frame["error"], strict=True):
            if not math.isfinite(error):
                continue
            item = cases[case_id]
            key = error_bands.serving_gpu_key(item.case.gpu_model)
            found.append(
                error_bands.ServingResidual(
                    run_id=str(case_id),
                    **error_bands.serving_cell(item.job, key),  # type: ignore[arg-type]
                    signed_percent=float(error) * 100.0,
                )
            )
    return found


def bands(
    items: Sequence[Scorable],
    frames: Mapping[str, pd.DataFrame],
    fits: Mapping[str, Mapping[str, ServingConstants]],
) -> dict[str, object]:
    """The serving error bands' table (``serving_error_bands.json``) from every split's
    held-out frames and, for the record, each held-out group's fitted constants."""
    constants = {
        by: {group: {name: getattr(c, name) for name in FIT_GRID} for group, c in groups.items()}
        for by, groups in fits.items()
    }
    return error_bands.table(band_residuals(items, frames), constants, error_bands.SERVING)


def held_out_bands(
    items: Sequence[Scorable],
    split_fits: Mapping[str, Mapping[str, ServingConstants]] | None = None,
) -> dict[str, object]:
    """The bands from every split (``SPLITS``), each group predicted with constants fitted
    on the others (the slow part: 30-55 minutes on two busy cores); with ``split_fits`` (a
    report's, :func:`report_fits`, or the stored file's) those constants, in seconds."""
    frames, fits = {}, {}
    for by in SPLITS:
        given = None if split_fits is None else split_fits[by]
        frames[by], fits[by] = held_out_fits(items, by, given)
    return bands(items, frames, fits)


def stored_band_fits(path: Path | None = None) -> dict[str, dict[str, ServingConstants]]:
    """The held-out groups' constants a stored bands file (default: the shipped one) names,
    by split."""
    path = path or error_bands.SERVING_BANDS_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        by: {group: ServingConstants(**values) for group, values in groups.items()}
        for by, groups in data["constants"].items()
    }


def write_bands(data: Mapping[str, object], path: Path | None = None) -> Path:
    """Write the bands' table (default: the shipped file); the path written."""
    path = path or error_bands.SERVING_BANDS_FILE
    path.write_text(error_bands.dumps(data), encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m fabricscope.accuracy.serving_accuracy",
        description="Score the serving model on the published measurements, in-sample and "
        "held out, and print the figures docs/MODEL.md quotes (20-55 minutes of fits).",
    )
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help=f"write the report into {DOCS_FILE.name}'s serving block, and the error bands "
        "from its fits",
    )
    parser.add_argument(
        "--write-bands",
        action="store_true",
        help=f"write the error bands to fabricscope/model/{error_bands.SERVING_BANDS_FILE.name}"
        " (alone: the held-out fits only, no report)",
    )
    args = parser.parse_args(argv)
    if args.write_bands and not args.write_docs:
        written = write_bands(held_out_bands(load_scorable()[0]))
        print(f"wrote {written.name}")
        return
    generated = report()
    print(generated)
    if args.write_docs:
        write_docs(generated)
        print(f"wrote the serving accuracy block of {DOCS_FILE.name}")
        # the bands from the report's own held-out fits, re-scored (seconds)
        _, split_fits = report_fits(generated)
        written = write_bands(held_out_bands(load_scorable()[0], split_fits))
        print(f"wrote {written.name}")


if __name__ == "__main__":
    main()
