"""The serving model (issue 36): its speed over 1,000,000 offers that share 500 hardware
profiles, and its accuracy on the published serving measurements.

Speed: the vectorised model estimates each distinct profile once (profiles x layouts x
batches in one call) and joins offers to the results by profile index; the baseline calls the
same model once per offer on a 10,000-offer sample (scaled). Accuracy: the figures
``fabricscope.accuracy.serving_accuracy.report`` prints (in-sample, held out, the plain
roofline on the same cases), computed by this run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from bench.bench_model import OFFERS, PROFILES, SAMPLE, _profile_rows
from fabricscope.model.serving import estimate_serving
from fabricscope.model.workloads import load_serving_workload
from fabricscope.rank.catalog import profiles

WORKLOAD = "llama3-70b-chat"


def _speed(report: Callable[[str], None]) -> list[str]:
    rng = np.random.default_rng(7)
    job = load_serving_workload(WORKLOAD)
    rows = _profile_rows(rng)
    hw = profiles(rows)
    offer_profile = rng.integers(0, PROFILES, OFFERS)
    offer_price = rng.uniform(1.0, 10.0, OFFERS)

    report(f"serving, vectorised: {OFFERS:,} offers over {PROFILES} profiles")
    started = time.perf_counter()
    result = estimate_serving(job, hw)
    # USD per million output tokens at full use of each offer's GPUs
    per_million = offer_price / (result.tokens_per_s_per_gpu[offer_profile] * 3600 / 1e6)
    vectorised_s = time.perf_counter() - started
    assert per_million.shape == (OFFERS,)

    report(f"serving, per-offer loop on {SAMPLE:,} offers")
    started = time.perf_counter()
    loop = np.empty(SAMPLE)
    for i in range(SAMPLE):
        one = estimate_serving(job, profiles([rows[offer_profile[i]]]))
        loop[i] = offer_price[i] / (one.tokens_per_s_per_gpu[0] * 3600 / 1e6)
    loop_s = (time.perf_counter() - started) * OFFERS / SAMPLE
    same = np.allclose(loop, per_million[:SAMPLE], equal_nan=True)
    return [
        "",
        f"### Serving model: {WORKLOAD} over {OFFERS:,} offers sharing {PROFILES} hardware "
        "profiles",
        "",
        "| measure | seconds | offers per second |",
        "|---|---|---|",
        f"| vectorised: each profile once (layouts and batches searched), offers joined by "
        f"index | {vectorised_s:.2f} | {OFFERS / vectorised_s:,.0f} |",
        f"| per-offer Python loop over the same model, {SAMPLE:,} measured, scaled "
        f"| {loop_s:,.0f} | {OFFERS / loop_s:,.0f} |",
        "",
        f"**Ratio: {loop_s / vectorised_s:,.0f}x** (target: under 1 s, at least 100x). "
        f"Both give the same USD per million tokens on the sample: {same}.",
    ]


def _accuracy(report: Callable[[str], None]) -> list[str]:
    from fabricscope.accuracy import serving_accuracy

    report("serving accuracy: fit, held out, roofline (about 20 minutes: 12 fits)")
    return [
        "",
        "### Serving accuracy on the published measurements (output tokens/s per GPU)",
        "",
        "What `python -m fabricscope.accuracy.serving_accuracy` prints, computed by this run "
        "(docs/MODEL.md, Serving, has the same figures): the TensorRT-LLM tables and MLPerf "
        "Inference v5.1's closed division (prompts from each dataset's length buckets, a third "
        "party's derivation from the official files), in-sample, each source, source family "
        "(MLPerf fitted on TensorRT-LLM only, and the other way) and GPU generation held out, "
        "MLPerf by scenario and node count, beside the plain roofline. Target: leave one source "
        "out median <= 20%, p90 <= 45%.",
        "",
        "```",
        serving_accuracy.report().rstrip(),
        "```",
    ]


def run(report: Callable[[str], None]) -> list[str]:
    return [*_speed(report), *_accuracy(report)]
