"""The serving model's percentile ratios are MLPerf's measured ones, and stay so."""

from __future__ import annotations

import pytest

from fabricscope.accuracy.serving_latency import latency_ratios, report, step_ratio
from fabricscope.model.serving import ServingConstants


def test_the_constants_are_the_measured_medians():
    c = ServingConstants()
    ratios = latency_ratios()
    assert {(r.measure, r.percentile) for r in ratios} == {
        ("ttft", "p50"),
        ("ttft", "p99"),
        ("tpot", "p50"),
        ("tpot", "p99"),
    }
    for r in ratios:
        assert r.runs >= 200  # every MLPerf Server and Interactive run, duplicates dropped
        assert r.p10 <= r.median <= r.p90
        # the constants carry the medians to two decimals; a p99 TPOT is the model's own
        # (a step's jitter plus the Poisson count of prompts interrupting it)
        if (r.measure, r.percentile) != ("tpot", "p99"):
            assert c.latency_ratio(r.measure, r.percentile) == pytest.approx(r.median, abs=0.005)


def test_a_decode_steps_jitter_is_measured_where_prompts_barely_interrupt():
    step = step_ratio()
    assert step.runs >= 8 and step.p10 <= step.median <= step.p90
    assert ServingConstants().tpot_step_p99_ratio == pytest.approx(step.median, abs=0.005)
    # less than the whole TPOT's spread, which the interrupting prompts widen
    whole = {(r.measure, r.percentile): r for r in latency_ratios()}["tpot", "p99"]
    assert 1.0 < step.median < whole.median


def test_queueing_spreads_the_first_token_more_than_the_next_ones():
    by = {(r.measure, r.percentile): r for r in latency_ratios()}
    assert by["ttft", "p99"].median > 1.5 > by["tpot", "p99"].median > 1.0
    assert by["tpot", "p50"].median == pytest.approx(1.0, abs=0.05)
    table = report()
    assert "| TTFT p99 | 2.34 |" in table and table.count("\n") == 6
