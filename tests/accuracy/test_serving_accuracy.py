"""The serving model scored on the published serving measurements: every case scored or
skipped with its reason, each scored case at the layout it ran, and the plain roofline never
slower than the model (whose efficiencies are at most 1)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from fabricscope.accuracy import serving_accuracy
from fabricscope.accuracy.serving_cases import load_cases


@pytest.fixture(scope="module")
def scored():
    items, skipped = serving_accuracy.load_scorable()
    return items, skipped, serving_accuracy.score(items)


def test_every_case_is_scored_or_skipped_with_a_reason(scored):
    items, skipped, _ = scored
    cases = load_cases()
    assert len(items) + len(skipped) == len(cases)
    assert {i.case.case_id for i in items}.isdisjoint(case_id for case_id, _ in skipped)
    assert all(reason and "\n" not in reason for _, reason in skipped)
    assert len(items) > 500  # the TensorRT-LLM throughput tables at fixed lengths
    assert sum(i.case.family == "mlperf" for i in items) > 200  # MLPerf v5.1's closed division
    assert not any(reason.startswith("workload") for _, reason in skipped)


def test_each_case_runs_at_its_own_layout_and_gets_a_finite_answer_where_it_fits(scored):
    items, _, frame = scored
    stated = frame["layout"] == "stated"
    assert list(frame.loc[stated, "tp"]) == [i.tp for i in items if i.tp is not None]
    # MLPerf's unstated layouts are searched on the measured system
    searched = [i for i in items if i.tp is None]
    assert searched and all(i.case.family == "mlperf" for i in searched)
    planned = frame[frame["fits"]]
    assert len(planned) > 0.9 * len(frame)
    assert np.isfinite(planned["predicted"]).all() and (planned["predicted"] > 0).all()
    assert frame.loc[~frame["fits"], "predicted"].isna().all()
    # no scored layout crosses a fabric: every replica fits one NVLink domain
    assert (frame.loc[frame["fits"], "fabric_share"] == 0).all()


def test_the_roofline_is_never_slower_than_the_model(scored):
    items, _, frame = scored
    # every fitted efficiency is 1 in the roofline, and the runtime costs nothing
    roof = serving_accuracy.ROOFLINE
    assert all(getattr(roof, n) == 1.0 for n in serving_accuracy.FIT_GRID if "efficiency" in n)
    assert roof.sequence_overhead_s == 0.0 and set(serving_accuracy.FIT_GRID) == {
        "hbm_efficiency",
        "decode_compute_efficiency",
        "prefill_efficiency",
        "sequence_overhead_s",
    }
    roofline = serving_accuracy.score(items, serving_accuracy.ROOFLINE)
    both = frame["fits"] & roofline["fits"]
    assert (roofline.loc[both, "predicted"] >= frame.loc[both, "predicted"] * (1 - 1e-9)).all()
    summary = serving_accuracy.summary(frame)
    assert summary.loc[0, "cases"] == len(frame)
    assert math.isfinite(summary.loc[0, "median_abs"])


def test_the_fit_picks_the_global_efficiencies_with_the_least_error(scored, monkeypatch):
    items, _, _ = scored
    grid = {
        "hbm_efficiency": (0.6, 1.0),
        "decode_compute_efficiency": (0.4,),
        "prefill_efficiency": (0.5,),
    }
    monkeypatch.setattr(serving_accuracy, "FIT_GRID", grid)
    chosen = serving_accuracy.fit(items)
    # the grid shared among processes or scored in this one: the same choice
    assert serving_accuracy.fit(items, workers=1) == chosen
    losses = {
        hbm: serving_accuracy._loss(
            serving_accuracy.score(
                items,
                serving_accuracy.ServingConstants(
                    hbm_efficiency=hbm, decode_compute_efficiency=0.4, prefill_efficiency=0.5
                ),
            )
        )
        for hbm in (0.6, 1.0)
    }
    assert chosen.hbm_efficiency == min(losses, key=losses.get)
    # held out: each source predicted with efficiencies fitted on the others only
    held = serving_accuracy.held_out(items[:40] + items[-40:])
    assert set(held["held_out"]) == {i.case.source_id for i in items[:40] + items[-40:]}


def test_a_data_and_expert_parallel_layout_is_scored_over_all_its_gpus(scored):
    items, _, frame = scored
    dep = [i for i in items if i.case.system.split()[-2:-1] == ["DEP4"]]
    assert dep and all((i.tp, i.pp) == (4, 1) for i in dep)
    assert all(len(i.profiles) == 1 and i.profiles.gpu_count[0] == 4 for i in dep)
    assert all(i.job.attention_data_parallel for i in dep)
    blog = [i for i in items if i.case.source_id == "trtllm_dsr1_best_perf"]
    assert blog and all(i.job.attention_data_parallel for i in blog)  # "attention DP", TP 8 EP 8
    assert not any(
        i.job.attention_data_parallel
        for i in items
        if i.case.ep is None and i.case.family == "trtllm"
    )
    # MLPerf's DeepSeek-R1: every harness config sets enable_attention_dp
    r1 = [i for i in items if i.case.family == "mlperf" and i.case.model == "deepseek-v3"]
    assert r1 and all(i.job.attention_data_parallel for i in r1)
    # every case runs on the system it measured; a TensorRT-LLM case's layout is all of it
    assert all(i.profiles.gpu_count[0] == i.case.gpus for i in items)
    assert all(i.tp * i.pp == i.case.gpus for i in items if i.case.family == "trtllm")
    assert frame.loc[frame["family"] == "trtllm", "fits"].all()


def test_held_out_by_gpu_generation_fits_on_the_other_generations(scored, monkeypatch):
    items, _, _ = scored
    generations = {
        serving_accuracy.group_of(i, "generation")
        for i in items
        if serving_accuracy.in_split(i, "generation")
    }
    assert generations == {"ampere", "ada", "hopper", "blackwell"}
    stranger = replace(items[0], case=replace(items[0].case, gpu_model="MI300X-OAM-192GB"))
    with pytest.raises(KeyError):
        serving_accuracy.group_of(stranger, "generation")  # no generation is guessed
    grid = {
        "hbm_efficiency": (0.4, 1.0),
        "decode_compute_efficiency": (0.4,),
        "prefill_efficiency": (0.5,),
    }
    monkeypatch.setattr(serving_accuracy, "FIT_GRID", grid)
    sample = [i for i in items if i.case.gpu_model.startswith(("A100", "L40S"))][::4]
    held = serving_accuracy.held_out(sample, "generation")
    assert set(held["held_out"]) == {"ampere", "ada"}
    ampere = held[held["held_out"] == "ampere"]
    fitted_on_ada = serving_accuracy.fit([i for i in sample if i.case.gpu_model.startswith("L40S")])
    expected = serving_accuracy.score(
        [i for i in sample if i.case.gpu_model.startswith("A100")], fitted_on_ada
    )
    assert list(ampere["predicted"]) == list(expected["predicted"])
    # one family only: nothing to hold out, an empty frame
    assert serving_accuracy.held_out(sample, "family").empty
    # AMD's GPUs have no generation: that split leaves them out, and guesses none
    amd = [i for i in items if i.case.gpu_model.startswith("MI3")]
    assert amd and not any(serving_accuracy.in_split(i, "generation") for i in amd)


# NVIDIA's B200 x8 Llama 3.1 405B Server (mlperf_inf_v5.1 line 239): FP4, TP 4 as its harness
# config states, 155 output tokens/s per GPU at p99 TTFT 6 s and TPOT 175 ms
KNOWN = "mlperf_inf_v5.1_llm.csv:239"


def test_mlperf_cases_are_scored_with_their_dataset_prompts_and_p99_bounds(scored):
    items, skipped, frame = scored
    mlperf = [i for i in items if i.case.family == "mlperf"]
    for item in mlperf:
        job, case = item.job, item.case
        assert job.mix is not None and len(job.mix) == 10
        assert {c.output_tokens for c in job.mix} == {round(case.output_len)}
        assert job.mean_input_tokens == pytest.approx(case.input_len, rel=0.01)
        if case.scenario == "offline":
            assert job.ttft_ms is None and job.tpot_ms is None
        else:
            assert (job.ttft_ms, job.tpot_ms) == (case.ttft_limit_ms, case.tpot_limit_ms)
            assert job.latency_percentile == "p99"
    reasons = dict(skipped)
    assert all(
        reasons[c.case_id] == "precision not stated"
        for c in load_cases()
        if c.source_id == "mlperf_inf_v4.1" and c.case_id in reasons
    )
    known = frame.set_index("case_id").loc[KNOWN]
    assert (known["tp"], known["pp"], known["layout"], known["scenario"]) == (
        4,
        1,
        "stated",
        "server",
    )
    # at the shipped constants (fitted on TensorRT-LLM only): within 25%
    assert abs(known["error"]) < 0.25
    # a bound only takes throughput away: each Server and Interactive case at most what the
    # same case makes without its bounds
    bounded = [i for i in mlperf if i.job.tpot_ms is not None]
    free = [
        replace(i, job=i.job.model_copy(update={"ttft_ms": None, "tpot_ms": None})) for i in bounded
    ]
    with_bounds = serving_accuracy.score(bounded)
    without = serving_accuracy.score(free)
    assert len(bounded) > 100
    assert (with_bounds["predicted"].fillna(0) <= without["predicted"] * (1 + 1e-9)).all()
    assert (with_bounds["predicted"] < without["predicted"] * 0.99).any()


def test_the_family_split_fits_each_family_on_the_other(scored, monkeypatch):
    items, _, _ = scored
    grid = {
        "hbm_efficiency": (0.6, 0.8),
        "decode_compute_efficiency": (0.4,),
        "prefill_efficiency": (0.6,),
    }
    monkeypatch.setattr(serving_accuracy, "FIT_GRID", grid)
    sample = [i for i in items if i.case.family == "trtllm"][::20] + [
        i for i in items if i.case.family == "mlperf"
    ][::10]
    frame, fits = serving_accuracy.held_out_fits(sample, "family")
    assert set(frame["held_out"]) == set(fits) == {"mlperf", "trtllm"}
    for family in ("mlperf", "trtllm"):
        others = [i for i in sample if i.case.family != family]
        assert fits[family] == serving_accuracy.fit(others, workers=1)
    lines = serving_accuracy._family_lines(frame, fits, serving_accuracy.score(sample))
    assert lines[0].startswith("  MLPerf (fitted on TensorRT-LLM only)")
    assert any(line.startswith("  TensorRT-LLM (fitted on MLPerf only)") for line in lines)
    assert any("MLPerf multi-node" in line for line in lines)


def test_the_docs_block_is_what_the_report_prints():
    """docs/MODEL.md's serving block, re-scored from the constants it names (seconds: no fit)."""
    printed = serving_accuracy.read_docs_report()
    fitted, split_fits = serving_accuracy.report_fits(printed)
    assert set(split_fits["family"]) == {"mlperf", "trtllm"}
    assert serving_accuracy.report(fitted, split_fits) == printed


@pytest.mark.slow
def test_the_docs_block_names_the_constants_the_fits_choose():
    """Each family's fit on the other (two full fits: minutes)."""
    items, _ = serving_accuracy.load_scorable()
    _, split_fits = serving_accuracy.report_fits(serving_accuracy.read_docs_report())
    for family, constants in split_fits["family"].items():
        others = [i for i in items if i.case.family != family]
        assert serving_accuracy.fit(others) == constants, family
