"""Scaling efficiency between sizes of one published job, predicted against measured."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench import model_docs
from fabricscope.accuracy.scaling_pairs import (
    SCALING_END,
    SCALING_START,
    job_of,
    scaling_pairs,
    scaling_table,
)
from fabricscope.accuracy.validation import (
    DOCS_FILE,
    HELD_OUT_END,
    HELD_OUT_START,
)


def _family(published_cases, name):
    return [c for c in published_cases if c.run_id.startswith(name)]


def test_the_efficiency_and_its_error_are_ratios_of_per_gpu_throughput(
    published_cases, published_scores
):
    # llm-foundry's 7B job, published at 8, 16, 32, 64 and 128 GPUs
    seven = _family(published_cases, "llmfoundry_7b_a100_40gb_bf16_s2048_")
    assert sorted(c.n_gpus for c in seven) == [8, 16, 32, 64, 128]
    by_run = {s.run_id: s for s in published_scores}
    small = next(c for c in seven if c.n_gpus == 8)
    large = next(c for c in seven if c.n_gpus == 128)
    # the model's own figures replaced by known ones: published 3,600 -> 3,240 tokens/s/GPU
    # (efficiency 0.9), predicted 4,000 -> 3,960 (0.99): optimistic by 9 points
    known = [
        replace(by_run[small.run_id], published=3600.0, predicted_timing=4000.0),
        replace(by_run[large.run_id], published=3240.0, predicted_timing=3960.0),
    ]
    [pair] = scaling_pairs([small, large], known)
    assert (pair.small_gpus, pair.large_gpus) == (8, 128)
    assert pair.published == pytest.approx(0.9)
    assert pair.predicted == pytest.approx(0.99)
    assert pair.error_points == pytest.approx(9.0)
    assert pair.verified
    table = scaling_table([pair])
    assert "| llmfoundry | 1 | 9.0 | 9.0 | 9.0 | +9.0 | 1 of 1 |" in table


def test_only_sizes_of_the_same_job_pair_and_each_against_its_smallest(
    published_cases, published_scores
):
    pairs = scaling_pairs(published_cases, published_scores)
    by_run = {c.run_id: c for c in published_cases}
    for pair in pairs:
        small, large = by_run[pair.small_run], by_run[pair.large_run]
        assert small.family == large.family
        assert small.hardware["gpu_model"] == large.hardware["gpu_model"]
        assert (small.workload.layers, small.workload.hidden_size) == (
            large.workload.layers,
            large.workload.hidden_size,
        )
        assert small.workload.seq_len == large.workload.seq_len
        assert small.workload.precision is large.workload.precision
        assert small.n_gpus < large.n_gpus
        # the job's smallest count is the base of every pair of the job
        assert small.n_gpus == min(c.n_gpus for c in published_cases if job_of(c) == pair.job)
    # five sizes make four pairs; a job at one size makes none
    seven = [p for p in pairs if p.small_run.startswith("llmfoundry_7b_a100_40gb_bf16_s2048_")]
    assert len(seven) == 4
    assert not scaling_pairs(published_cases[:1], published_scores[:1])
    # a VERIFY row's pair is kept apart (the Llama 3 405B runs at 8,192 and 16,384 GPUs)
    assert any(not p.verified for p in pairs)


def test_the_documented_scaling_block_is_the_generated_one(published_cases):
    text = DOCS_FILE.read_text(encoding="utf-8")
    documented = text[text.index(SCALING_START) : text.index(SCALING_END) + len(SCALING_END)]
    assert documented == model_docs.scaling(published_cases), (
        "docs/MODEL.md's scaling block is out of date: run python -m bench.model_docs"
    )


def test_the_held_out_block_states_the_held_out_scaling_of_these_pairs(
    published_cases, published_scores
):
    # the held-out block takes minutes to regenerate; checked by the pairs it states
    verified = [p for p in scaling_pairs(published_cases, published_scores) if p.verified]
    text = DOCS_FILE.read_text(encoding="utf-8")
    block = text[text.index(HELD_OUT_START) : text.index(HELD_OUT_END)]
    stale = "docs/MODEL.md's held-out block is out of date: run python -m bench.model_docs"
    assert f"Scaling, held out: the same {len(verified)} pairs" in block, stale
    assert f"| all | {len(verified)} |" in block, stale
