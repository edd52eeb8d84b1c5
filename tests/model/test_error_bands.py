"""The error bands: a table from held-out residuals, looked up by a job's cell with fallbacks
(fabricscope/model/error_bands.py). The stored file against the held-out fits is checked in
tests/accuracy/test_held_out.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fabricscope.model import error_bands
from fabricscope.model.error_bands import (
    MIN_RUNS,
    PERCENTILE,
    BandTable,
    Residual,
    band_for,
    band_text,
    describe,
    table,
)
from fabricscope.model.generations import GENERATIONS
from fabricscope.model.workloads import preset


def _residuals(cell: tuple[str, str, str, str], errors: list[float], prefix: str) -> list[Residual]:
    # each run held out twice (by generation and by stack), as held_out.residuals gives them
    return [Residual(f"{prefix}{i // 2}", *cell, signed_percent=e) for i, e in enumerate(errors)]


HOPPER_FP8 = ("hopper", "fp8", "dense", "megatron")
HOPPER_FSDP = ("hopper", "fp8", "dense", "fsdp")
AMPERE = ("ampere", "bf16", "dense", "fsdp")


@pytest.fixture(scope="module")
def made() -> dict:
    rng = np.random.default_rng(7)
    return table(
        [
            *_residuals(HOPPER_FP8, list(rng.normal(-10, 8, 2 * MIN_RUNS)), "h"),
            *_residuals(HOPPER_FSDP, [3.0, -4.0, 5.0, 6.0], "f"),  # two runs: too few
            *_residuals(AMPERE, list(rng.normal(2, 5, 4 * MIN_RUNS)), "a"),
        ],
        {"eta_compute_max": 0.65},
    )


def test_a_cell_holds_the_percentile_of_its_absolute_errors_and_its_signed_median(made):
    cells = {tuple(c[k] for k in error_bands.KEYS): c for c in made["cells"]}
    errors = np.array(
        [
            r.signed_percent
            for r in _residuals(
                HOPPER_FP8, list(np.random.default_rng(7).normal(-10, 8, 2 * MIN_RUNS)), "h"
            )
        ]
    )
    cell = cells[HOPPER_FP8]
    assert (cell["runs"], cell["predictions"]) == (MIN_RUNS, 2 * MIN_RUNS)
    assert cell["percent"] == round(float(np.percentile(np.abs(errors), PERCENTILE)), 1)
    assert cell["bias_percent"] == round(float(np.median(errors)), 1)
    # every coarser cell is stored too, down to every run
    assert cells[("hopper", "fp8", "dense", None)]["runs"] == MIN_RUNS + 2
    assert cells[(None, None, None, None)]["runs"] == MIN_RUNS + 2 + 2 * MIN_RUNS
    assert made["percentile"] == PERCENTILE and made["min_runs"] == MIN_RUNS


def test_a_cell_of_too_few_runs_falls_back_and_says_so(made):
    bands = BandTable(made)
    own = bands.band(dict(zip(error_bands.KEYS, HOPPER_FP8, strict=True)))
    assert own is not None and own.cell == own.asked and own.runs == MIN_RUNS
    assert own.label == "Hopper FP8 dense on Megatron"

    thin = bands.band(dict(zip(error_bands.KEYS, HOPPER_FSDP, strict=True)))
    assert thin is not None and thin.cell["stack"] is None and thin.runs == MIN_RUNS + 2
    assert thin.label == (
        f"Hopper FP8 dense, any stack (fewer than {MIN_RUNS} held-out runs of Hopper FP8 "
        "dense on FSDP)"
    )
    # MoE on Hopper: no run at all of that kind, so Hopper FP8 of any model, then Hopper
    moe = bands.band(
        {"generation": "hopper", "precision": "fp8", "architecture": "moe", "stack": "megatron"}
    )
    assert moe is not None and dict(moe.cell) == {
        "generation": "hopper",
        "precision": "fp8",
        "architecture": None,
        "stack": None,
    }


def test_an_unknown_generation_gets_every_runs_band_labelled_so(made):
    bands = BandTable(made)
    unknown = bands.band(
        {"generation": None, "precision": "bf16", "architecture": "dense", "stack": "fsdp"},
    )
    assert unknown is not None and all(v is None for v in unknown.cell.values())
    assert unknown.runs == MIN_RUNS + 2 + 2 * MIN_RUNS
    assert (
        unknown.label
        == "any GPU generation, precision, model and stack (the GPU's generation is not known)"
    )
    # a known generation no run was held out on falls back the same way, and says why
    ada = bands.band(
        {"generation": "ada", "precision": "bf16", "architecture": "dense", "stack": "fsdp"}
    )
    assert ada is not None and ada.runs == unknown.runs
    assert "fewer than" in ada.label and "Ada Lovelace BF16 dense on FSDP" in ada.label
    # an empty table invents nothing
    assert BandTable({**made, "cells": []}).band(dict(unknown.asked)) is None


def test_the_band_in_words_states_its_percentile_runs_and_bias(made):
    band = BandTable(made).band(dict(zip(error_bands.KEYS, HOPPER_FP8, strict=True)))
    assert band is not None
    text = band.sentence()
    assert text.startswith(f"typically within ±{band.percent:.0f}% for Hopper FP8 dense on")
    assert f": the p{PERCENTILE} of the held-out errors on {MIN_RUNS} published runs;" in text
    assert "too slow (the job likelier takes less time)" in text  # the bias is negative
    assert band_text(band.percent, band.label, band.runs) == (
        f"±{band.percent:.0f}% (Hopper FP8 dense on Megatron, {MIN_RUNS} runs held out)"
    )
    assert band_text(float("nan"), None, None) == "unknown"
    made_ranges = error_bands.ranges(band.percent, 100.0, 80.0, 1000.0, 800.0)
    assert made_ranges["time_to_train_h_band_high"] == pytest.approx(100 + band.percent)
    assert made_ranges["cost_usd_band_low"] == pytest.approx(800 * (1 - band.percent / 100))
    wide = error_bands.ranges([140.0, float("nan")], 10.0, 8.0, 100.0, 80.0)
    assert np.isnan(wide["time_to_train_h_band_low"]).all()  # no lower bound from >= 100%
    assert wide["time_to_train_h_band_high"][0] == pytest.approx(24.0)
    assert np.isnan(wide["cost_usd_band_high"][1])  # no band, no range
    rows = [band.fields(), band.fields(), {"error_band_pct": float("nan")}]
    assert error_bands.notes(rows) == [band.sentence()]


def test_describe_names_the_keys_a_cell_spans():
    assert (
        describe({"generation": "hopper", "precision": None, "architecture": None, "stack": None})
        == "Hopper, any precision, model and stack"
    )
    assert (
        describe({"generation": None, "precision": None, "architecture": None, "stack": None})
        == "any GPU generation, precision, model and stack"
    )


def test_the_file_is_one_cell_a_line_and_reads_back_the_same(made, tmp_path):
    path = tmp_path / "bands.json"
    path.write_text(error_bands.dumps(made), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8")) == made
    assert len(path.read_text(encoding="utf-8").splitlines()) > len(made["cells"])
    with pytest.raises(ValueError, match="regenerate with python -m"):
        BandTable({**made, "format": 0})


def test_the_stored_bands_cover_the_presets_on_every_generation():
    for name in ("llama3-70b", "deepseek-v3", "gpt3-175b"):
        job = preset(name)
        for gpu in GENERATIONS:
            band = band_for(gpu, job)
            assert band is not None and band.runs >= MIN_RUNS, (name, gpu)
    llama = band_for("H100-SXM-80GB", preset("llama3-70b"))
    assert llama is not None and llama.cell["generation"] == "hopper"
    assert band_for("MI300X-OAM-192GB", preset("llama3-70b")).label.endswith(  # type: ignore[union-attr]
        "(the GPU's generation is not known)"
    )
