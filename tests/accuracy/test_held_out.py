"""Each GPU generation and software stack held out (fabricscope/accuracy/held_out.py), and the
error bands made of those residuals."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from bench import model_docs
from fabricscope.accuracy import held_out
from fabricscope.accuracy.held_out import (
    SPLITS_END,
    SPLITS_START,
    bands,
    blind_cases,
    generation,
    held_out_splits,
    residuals,
    signed_percent,
    splits_table,
    stack,
)
from fabricscope.accuracy.published_tables import calibration_set, torchtitan_cases
from fabricscope.accuracy.validation import (
    DOCS_FILE,
    FIT_BOUNDS,
    fit_constants,
    leave_one_group_out,
    score,
)
from fabricscope.model import error_bands
from fabricscope.model.scaling import ModelConstants

# a coarse grid: the same fit, few enough evaluations for a test
COARSE = {"eta_compute_max": 3, "matrix_width_half": 3, "fp8_efficiency_factor": 2, "dp_overlap": 2}


@pytest.fixture(scope="module")
def calibration():
    return calibration_set()[0]


@pytest.fixture(scope="module")
def splits_run(calibration):
    """Every GPU generation and stack held out over every row (about a minute), once for the
    docs block and the error bands alike."""
    return held_out_splits(calibration, blind_cases())


def test_each_generation_is_predicted_by_constants_fitted_without_it(calibration):
    # a few rows of each generation, one VERIFY row, and torchtitan's blind H200 rows
    subset = [
        *[c for c in calibration if generation(c) == "ampere" and c.verified][::12],
        *[c for c in calibration if generation(c) == "hopper" and c.verified][::6],
        *[c for c in calibration if not c.verified][:1],
    ]
    blind = torchtitan_cases()[0]
    assert blind and {generation(c) for c in blind} == {"hopper"}
    groups = leave_one_group_out(subset, generation, blind, grid_points=COARSE)
    verified = [c for c in subset if c.verified]
    assert [g.name for g in groups] == ["ampere", "hopper"]
    for group in groups:
        others = [c for c in verified if generation(c) != group.name]
        fitted, report = fit_constants(others, grid_points=COARSE)
        assert group.constants == report.fitted  # fitted on the other generation alone
        mine = [c for c in verified if generation(c) == group.name]
        theirs = [c for c in blind if generation(c) == group.name]
        assert group.cases == (*mine, *theirs) and group.blind == len(theirs)
        assert [s.timing_error_percent for s in group.scores] == [
            s.timing_error_percent for s in score(group.cases, fitted)
        ]
    # a VERIFY row is neither fitted on nor scored
    assert not any(not c.verified for g in groups for c in g.cases)


def test_a_group_only_the_blind_tables_hold_keeps_the_shipped_constants(calibration):
    subset = [c for c in calibration if c.verified and c.family in ("mcore", "megatron2021")][::3]
    blind = torchtitan_cases()[0]
    groups = leave_one_group_out(subset, lambda c: c.family, blind, grid_points=COARSE)
    [titan] = [g for g in groups if g.name == "torchtitan"]
    shipped = ModelConstants()
    assert titan.constants == {name: float(getattr(shipped, name)) for name in FIT_BOUNDS}
    assert titan.blind == len(blind) == len(titan.scores)
    assert [s.predicted_timing for s in titan.scores] == [
        s.predicted_timing for s in score(blind, shipped)
    ]
    with pytest.raises(ValueError, match="two groups"):
        leave_one_group_out(subset, lambda c: "one", blind)


def test_a_gpu_without_a_generation_is_refused(calibration):
    case = calibration[0]
    odd = replace(case, hardware={**case.hardware, "gpu_model": "K80-PCIE-12GB"})
    with pytest.raises(KeyError, match="K80-PCIE-12GB: no GPU generation in fabricscope/model"):
        generation(odd)
    assert stack(case) == case.workload.stack.value


def test_the_table_says_which_way_each_group_errs(calibration):
    subset = [c for c in calibration if c.verified][::8]
    groups = held_out_splits(subset, torchtitan_cases()[0], grid_points=COARSE)["stack"]
    table = splits_table("stack", groups)
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in table.splitlines()}
    for group in groups:
        signed = sorted(signed_percent(s) for s in group.scores)
        cells = rows[group.name].split(" | ")
        assert cells[1] == str(len(group.scores)) and cells[2] == str(group.blind)
        middle = len(signed) // 2
        median = (signed[middle] + signed[~middle]) / 2
        assert cells[4] == f"{median:+.1f}"
        assert (float(cells[4]) > 0) == (median > 0)  # positive: predicted too fast
    pooled = rows["all, each stack held out"].split(" | ")
    assert pooled[1] == str(sum(len(g.scores) for g in groups))
    # the blind FP8 rows are their own line of the fsdp group, beside its BF16 rows
    assert rows["fsdp: fp8, dense"].split(" | ")[2] == str(len(torchtitan_cases()[0]))


def test_each_held_out_prediction_is_a_residual_of_its_runs_cell(calibration):
    subset = [c for c in calibration if c.verified][::10]
    split = held_out_splits(subset, torchtitan_cases()[0], grid_points=COARSE)
    made = residuals(split)
    assert len(made) == sum(len(g.scores) for groups in split.values() for g in groups)
    # every run once per split, in its own cell, with its signed error
    assert set(Counter(r.run_id for r in made).values()) == {len(split)}
    [group] = [g for g in split["stack"] if g.name == "fsdp"]
    first = next(r for r in made if r.run_id == group.cases[0].run_id and r.stack == "fsdp")
    titan = [r for r in made if r.run_id == torchtitan_cases()[0][0].run_id]
    assert {(r.generation, r.precision, r.architecture, r.stack) for r in titan} == {
        ("hopper", "fp8", "dense", "fsdp")
    }
    assert first.generation == generation(group.cases[0])
    stored = bands(split)
    assert stored["constants"] == {
        name: float(getattr(ModelConstants(), name)) for name in FIT_BOUNDS
    }
    assert stored["cells"][-1]["runs"] == len(subset) + len(torchtitan_cases()[0])


def test_the_documented_splits_are_the_generated_ones(calibration, splits_run):
    # about a minute: one refit per group that has calibration rows (shared with the bands)
    text = DOCS_FILE.read_text(encoding="utf-8")
    assert SPLITS_START in text and SPLITS_END in text, "docs/MODEL.md lacks the splits block"
    documented = text[text.index(SPLITS_START) : text.index(SPLITS_END) + len(SPLITS_END)]
    assert documented == model_docs.splits(calibration, splits_run), (
        "docs/MODEL.md's held-out-splits block is out of date: run python -m bench.model_docs"
    )
    assert held_out.SPLIT_GRID.keys() == FIT_BOUNDS.keys()


@pytest.mark.slow
def test_the_stored_error_bands_are_the_held_out_ones(splits_run):
    # the same fits as the docs block's (the module's splits_run): no time of its own
    stored = json.loads(error_bands.BANDS_FILE.read_text(encoding="utf-8"))
    assert stored == bands(splits_run), (
        "fabricscope/model/error_bands.json is out of date: run python -m "
        "fabricscope.accuracy.held_out --write-bands (or python -m bench.model_docs)"
    )
