"""One workload over 1,000,000 offers that share 500 hardware profiles, layout search on.

The vectorised path estimates each distinct profile once and joins offers to the
results by profile index; the baseline loops over offers in Python, calling the same
model once per offer, on a 10,000-offer sample (scaled).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from bench import llm_analysis_baseline, megatron_memory, model_docs
from pipeline.catalog import profiles
from pipeline.model.scaling import estimate
from pipeline.published_tables import calibration_set
from pipeline.scaling_pairs import held_out_scaling
from pipeline.validation import (
    accuracy_table,
    held_out_table,
    leave_one_family_out,
    score,
)
from pipeline.workloads import preset

OFFERS = 1_000_000
PROFILES = 500
SAMPLE = 10_000
WORKLOAD = "llama3-70b"


def _profile_rows(rng: np.random.Generator) -> list[dict[str, object]]:
    gpus = ["H100-SXM-80GB", "A100-SXM-80GB", "H200-SXM-141GB", "B200-SXM-180GB"]
    fabrics = ["infiniband", "spectrum_x", "roce", "efa", "ethernet"]
    rows = []
    for index in range(PROFILES):
        rows.append(
            {
                "gpu_model": gpus[index % len(gpus)],
                "gpu_count": int(8 * 2 ** rng.integers(3, 10)),
                "gpus_per_node": 8,
                "fabric_class": fabrics[index % len(fabrics)],
                "fabric_gbps_per_gpu": float(rng.choice([100, 200, 400, 800])),
            }
        )
    return rows


def _accuracy(report: Callable[[str], None]) -> list[str]:
    """The accuracy table, with llm-analysis as a third row when it is installed."""
    cases = calibration_set()[0]
    extra: list[tuple[str, list[float | None]]] = []
    if llm_analysis_baseline.AVAILABLE:
        report(f"{llm_analysis_baseline.row_name()} on {len(cases)} published runs")
        results = llm_analysis_baseline.llm_analysis_results(cases, score(cases))
        extra.append((llm_analysis_baseline.row_name(), [r.error_percent for r in results]))
        notes = llm_analysis_baseline.notes(results)
    else:
        notes = [llm_analysis_baseline.MISSING]
    keep = [i for i, case in enumerate(cases) if case.verified]
    verified = [cases[i] for i in keep]
    verified_extra = [(name, [errors[i] for i in keep]) for name, errors in extra]
    report("leave-one-family-out: one constant fit per source family")
    groups = leave_one_family_out(cases)
    held_out = held_out_table(groups)
    blind = model_docs.blind().splitlines()[1:-1]  # the blocks without their markers
    scaling = model_docs.scaling(cases).splitlines()[1:-1]
    return [
        f"In-sample: the model's fitted constants were fitted on the {len(verified)} verified "
        "rows, so the tables below flatter it. Held out (each source family predicted with "
        "constants fitted on the other families only; target: median <= 10%, p90 <= 30%):",
        "",
        held_out,
        "",
        held_out_scaling(cases, groups),
        "",
        *scaling,
        "",
        *blind,
        "",
        f"In-sample, the {len(verified)} verified rows (the accuracy targets' rows; the others' "
        "sources say VERIFY):",
        "",
        accuracy_table(verified, extra=verified_extra),
        "",
        f"In-sample, all {len(cases)} rows:",
        "",
        accuracy_table(cases, extra=extra),
        "",
        *notes,
    ]


def run(report: Callable[[str], None]) -> list[str]:
    rng = np.random.default_rng(7)
    job = preset(WORKLOAD)
    rows = _profile_rows(rng)
    hw = profiles(rows)
    offer_profile = rng.integers(0, PROFILES, OFFERS)
    offer_price = rng.uniform(1.0, 10.0, OFFERS)

    report(f"vectorised: {OFFERS:,} offers over {PROFILES} profiles")
    started = time.perf_counter()
    result = estimate(job, hw)
    cost = result.gpu_hours[offer_profile] * offer_price
    hours = result.time_to_train_h[offer_profile]
    vectorised_s = time.perf_counter() - started
    assert cost.shape == hours.shape == (OFFERS,)

    report(f"per-offer loop on {SAMPLE:,} offers")
    started = time.perf_counter()
    loop_cost = np.empty(SAMPLE)
    for i in range(SAMPLE):
        one = estimate(job, profiles([rows[offer_profile[i]]]))
        loop_cost[i] = one.gpu_hours[0] * offer_price[i]
    loop_s = (time.perf_counter() - started) * OFFERS / SAMPLE
    same = np.allclose(loop_cost, cost[:SAMPLE], equal_nan=True)
    return [
        "",
        f"### Model: {WORKLOAD} over {OFFERS:,} offers sharing {PROFILES} hardware profiles",
        "",
        "| measure | seconds | offers per second |",
        "|---|---|---|",
        f"| vectorised: each profile once (layout search on), offers joined by index "
        f"| {vectorised_s:.2f} | {OFFERS / vectorised_s:,.0f} |",
        f"| per-offer Python loop over the same model, {SAMPLE:,} measured, scaled "
        f"| {loop_s:,.0f} | {OFFERS / loop_s:,.0f} |",
        "",
        f"**Ratio: {loop_s / vectorised_s:,.0f}x** (target: under 1 s, at least 100x). "
        f"Both give the same costs on the sample: {same}.",
        "",
        "### Accuracy on the published runs (tokens/s per GPU, each run's own layout)",
        "",
        *_accuracy(report),
        "",
        *megatron_memory.table(),
    ]
