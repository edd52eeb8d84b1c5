"""How far a served request's latency at p50 and p99 sits from its mean, measured.

The serving model computes a steady-state mean time to first token and time per output token.
A target is usually a percentile (MLPerf's bounds are p99). MLPerf Inference's loadgen logs the
mean, p50 and p99 of both for every Server and Interactive run, each run at the highest load
that met its p99 bounds, so the ratios of those percentiles to their means are what a service
sized to its targets sees. ``ServingConstants`` carries their medians over every such run
(:func:`latency_ratios`; a test keeps the two in step). Issue 36.

A p99 time per output token is not taken whole: the model counts the prompts that interrupt a
request's decoding as a Poisson count of prefills (``serving.poisson_interruptions``), and
takes only a decode step's own jitter from the logs: :func:`step_ratio`, the p99 over the
mean on the runs whose prompts are at most a quarter of their outputs, where prefill barely
interrupts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fabricscope.accuracy.serving_cases import ServingCase, load_cases

PERCENTILES = ("p50", "p99")
MEASURES = ("ttft", "tpot")


@dataclass(frozen=True)
class LatencyRatio:
    """A percentile over its mean, across the runs that logged both."""

    measure: str  # "ttft" | "tpot"
    percentile: str  # "p50" | "p99"
    median: float
    p10: float
    p90: float
    runs: int


def _ratio(case: ServingCase, measure: str, percentile: str) -> float | None:
    mean = getattr(case, f"measured_{measure}_ms")
    value = getattr(case, f"measured_{measure}_{percentile}_ms")
    if mean is None or value is None or mean <= 0:
        return None
    return float(value) / float(mean)


def latency_ratios(cases: Sequence[ServingCase] | None = None) -> list[LatencyRatio]:
    """Each percentile over its mean, for TTFT and TPOT, over the MLPerf Server and
    Interactive runs (duplicates already dropped by the case loader)."""
    chosen = [
        c
        for c in (load_cases() if cases is None else cases)
        if c.family == "mlperf" and c.scenario in ("server", "interactive")
    ]
    out = []
    for measure in MEASURES:
        for percentile in PERCENTILES:
            values = [r for c in chosen if (r := _ratio(c, measure, percentile)) is not None]
            if not values:
                raise ValueError(f"no run logs both the mean and {percentile} of {measure}")
            p10, median, p90 = np.percentile(values, [10, 50, 90])
            out.append(
                LatencyRatio(
                    measure, percentile, float(median), float(p10), float(p90), len(values)
                )
            )
    return out


# a run's prompts barely interrupt its decoding when its mean prompt is at most this share of
# its mean output (prefill costs about as much per token as a decode step's share of it)
PREFILL_LIGHT = 0.25
LABELS = {"tpot step": "TPOT (prompts <= 1/4 of output)"}


def step_ratio(cases: Sequence[ServingCase] | None = None) -> LatencyRatio:
    """A decode step's p99 over its mean: TPOT's ratio on the Server and Interactive runs
    whose mean prompt is at most ``PREFILL_LIGHT`` of their mean output."""
    values = [
        r
        for c in (load_cases() if cases is None else cases)
        if c.family == "mlperf"
        and c.scenario in ("server", "interactive")
        and c.input_len is not None
        and c.output_len
        and c.input_len <= PREFILL_LIGHT * c.output_len
        and (r := _ratio(c, "tpot", "p99")) is not None
    ]
    if not values:
        raise ValueError("no run with short prompts logs the mean and p99 of TPOT")
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return LatencyRatio("tpot step", "p99", float(median), float(p10), float(p90), len(values))


def report(cases: Sequence[ServingCase] | None = None) -> str:
    """A markdown table of the ratios (docs/MODEL.md quotes it)."""
    lines = [
        "| latency | percentile / mean: median | p10 | p90 | runs |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in [*latency_ratios(cases), step_ratio(cases)]:
        lines.append(
            f"| {LABELS.get(r.measure, r.measure.upper())} {r.percentile} | {r.median:.2f} | "
            f"{r.p10:.2f} | "
            f"{r.p90:.2f} | {r.runs} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
