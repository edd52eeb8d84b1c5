"""llm-analysis as the third estimator of the accuracy table (bench/llm_analysis_baseline.py).

llm-analysis is a test dependency (pyproject's test extra), so the tests that run it fail,
not skip, when it is missing.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import re

import numpy as np
import pytest

from bench import bench_model, llm_analysis_baseline
from fabricscope.accuracy.validation import accuracy_table
from fabricscope.model.workload import LoRA, Precision


@pytest.fixture
def cases(published_cases):
    return published_cases


@pytest.fixture
def scores(published_scores):
    return published_scores


# ---- the table (no llm-analysis needed)


def test_extra_row_leaves_out_unscored_cases(cases):
    three = cases[:3]
    table = accuracy_table(three, extra=[("x", [1.0, None, 3.0])]).splitlines()
    assert table[:4] == accuracy_table(three).splitlines()
    assert table[4] == "| x | 2 of 3 | 2.0 | 3.0 | 2 | 2 |"


def test_extra_row_without_gaps_and_with_none_scored(cases):
    two = cases[:2]
    table = accuracy_table(two, extra=[("all", [5.0, 40.0]), ("none", [None, None])])
    lines = table.splitlines()
    assert lines[4] == "| all | 2 | 22.5 | 40.0 | 1 | 1 |"
    assert lines[5] == "| none | 0 of 2 | n/a | n/a | 0 | 0 |"


def test_extra_row_must_score_the_same_cases(cases):
    with pytest.raises(ValueError, match="3 errors for 2 cases"):
        accuracy_table(cases[:2], extra=[("x", [1.0, 2.0, 3.0])])


def test_bench_without_llm_analysis_stops_and_says_how_to_install(monkeypatch):
    # the bench prints docs/MODEL.md's blocks, whose table has llm-analysis's row: without it
    # the bench would print other figures than the docs, so it stops before writing either
    monkeypatch.setattr(llm_analysis_baseline, "AVAILABLE", False)
    monkeypatch.setattr(bench_model.model_docs, "write", pytest.fail)
    with pytest.raises(SystemExit, match=re.escape(llm_analysis_baseline.MISSING)):
        bench_model._accuracy(lambda _message: None)
    assert "pip install -e .[bench]" in llm_analysis_baseline.MISSING


def test_layout_parsing():
    fields = llm_analysis_baseline.parse_layout("tp=8,pp=16,dp=8,mb=1,recompute=full,vpp=2")
    assert fields == {"tp": "8", "pp": "16", "dp": "8", "mb": "1", "recompute": "full", "vpp": "2"}
    with pytest.raises(llm_analysis_baseline.Unrepresentable, match="does not give mb"):
        llm_analysis_baseline.parse_layout("tp=8,pp=16,dp=8,recompute=full")


# ---- llm-analysis itself


def _needs_llm_analysis() -> None:
    """llm-analysis is a test dependency (pyproject's test extra): missing is a failure."""
    assert llm_analysis_baseline.AVAILABLE, llm_analysis_baseline.MISSING


def test_states_its_flops_efficiency_comment():
    _needs_llm_analysis()
    constant = importlib.import_module("llm_analysis.constant")
    assert "FLOPS efficiency achieved by Megatron-LM is ~0.5 for LLM training" in (
        inspect.getsource(constant)
    )
    assert llm_analysis_baseline.FLOPS_EFFICIENCY == 0.5


def test_scores_every_published_run(cases, scores):
    _needs_llm_analysis()
    results = llm_analysis_baseline.llm_analysis_results(cases, scores)
    assert len(results) == len(cases)
    # every run but those using context parallelism, which llm-analysis has no notion of, and
    # FP8 training (its 8-bit dtypes are integer quantisation)
    unscored = {r.run_id: r.reason for r in results if r.error_percent is None}
    with_cp = {c.run_id for c in cases if c.layout is not None and int(c.layout.cp[0]) > 1}
    fp8 = {c.run_id for c in cases if c.workload.precision is Precision.FP8}
    assert with_cp and fp8 and set(unscored) == with_cp | fp8
    for run_id, reason in unscored.items():
        assert ("fp8 training" if run_id in fp8 else "no context parallelism") in reason
    scored = [r.error_percent for r in results if r.error_percent is not None]
    assert all(math.isfinite(e) and e >= 0 for e in scored)


def test_matches_megatron_flops_at_half_peak(cases, scores):
    """GPT-3 175B, full recompute: 4 forward passes of Megatron's 24 B s l h^2 (1 + s/6h +
    V/12lh) per step, at 0.5 x the A100's 312 TFLOP/s, with no bubble or communication."""
    _needs_llm_analysis()
    index = next(i for i, c in enumerate(cases) if c.run_id == "megatron_readme_gpt3_175b_1024a100")
    case, scored = cases[index], scores[index]
    w = case.workload
    layers, h, s, v = w.layers, w.hidden_size, w.seq_len, w.vocab_size
    forward = 24 * layers * s * h * h * (1 + s / (6 * h) + v / (12 * layers * h))
    expected = s / (4 * forward / (0.5 * 312e12))  # tokens/s per GPU
    predicted, _fits = llm_analysis_baseline.predict(case, scored)
    assert predicted == pytest.approx(expected, rel=1e-9)


def test_unrepresentable_cases_are_none_with_a_reason(cases, scores):
    _needs_llm_analysis()
    lora = dataclasses.replace(
        cases[0], workload=cases[0].workload.model_copy(update={"lora": LoRA(rank=16)})
    )
    odd_layout = dataclasses.replace(scores[1], layout="tp=1,pp=1")
    results = llm_analysis_baseline.llm_analysis_results(
        [lora, cases[1], cases[2]], [scores[0], odd_layout, scores[2]]
    )
    assert [r.error_percent is None for r in results] == [True, True, False]
    assert "LoRA" in results[0].reason
    assert "does not give dp, mb, recompute" in results[1].reason
    notes = llm_analysis_baseline.notes(results)
    assert "1 of 3 cases scored" in notes[0]
    assert f"- {cases[0].run_id}: LoRA" in "\n".join(notes)


def test_the_model_clearly_beats_llm_analysis(cases, scores):
    """The issue's bar: on the same rows, the model's median, worst and within-10% all beat
    llm-analysis at the efficiency its own constants name."""
    _needs_llm_analysis()
    errors = llm_analysis_baseline.llm_analysis_errors(cases, scores)
    common = [
        (s.timing_error_percent, e) for s, e in zip(scores, errors, strict=True) if e is not None
    ]
    unscorable = sum(
        c.workload.precision is Precision.FP8 or (c.layout is not None and int(c.layout.cp[0]) > 1)
        for c in cases
    )
    assert len(common) == len(scores) - unscorable  # the cp and FP8 rows alone are left out
    ours, theirs = [o for o, _ in common], [t for _, t in common]
    median = sorted(ours)[len(ours) // 2], sorted(theirs)[len(theirs) // 2]
    assert median[0] < 0.6 * median[1]
    # the worst row beats theirs (29% against 30% since the fit minimises the mean error, which
    # the held-out figures gain most from; its worst is llm-foundry's 70B at 64 GPUs, published
    # 27% slower per GPU than the same job at 128); the 90th percentile by far
    assert max(ours) < max(theirs)
    assert float(np.percentile(ours, 90)) < 0.7 * float(np.percentile(theirs, 90))
    assert sum(e <= 10 for e in ours) > 1.3 * sum(e <= 10 for e in theirs)
