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
    assert not any(reason.startswith("workload") for _, reason in skipped)


def test_each_case_runs_at_its_own_layout_and_gets_a_finite_answer_where_it_fits(scored):
    items, _, frame = scored
    assert list(frame["tp"]) == [i.tp for i in items]
    planned = frame[frame["fits"]]
    assert len(planned) > 0.9 * len(frame)
    assert np.isfinite(planned["predicted"]).all() and (planned["predicted"] > 0).all()
    assert frame.loc[~frame["fits"], "predicted"].isna().all()


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
    assert not any(i.job.attention_data_parallel for i in items if i.case.ep is None)
    # every case runs on as many GPUs as it measured
    assert all(i.tp * i.pp == i.case.gpus for i in items)
    assert frame["fits"].all()


def test_held_out_by_gpu_generation_fits_on_the_other_generations(scored, monkeypatch):
    items, _, _ = scored
    generations = {serving_accuracy.group_of(i, "generation") for i in items}
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
    # one family only (MLPerf is not scored yet): nothing to hold out, an empty frame
    assert serving_accuracy.held_out(sample, "family").empty
