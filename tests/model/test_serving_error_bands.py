"""The serving error bands: the training bands' cells, fallback and lookup over a served
model's keys (GPU generation, dense or MoE, weight precision; fabricscope/model/
error_bands.py, SERVING). The stored file against the held-out fits is checked in
tests/accuracy/test_serving_bands.py."""

from __future__ import annotations

import numpy as np
import pytest

from fabricscope.model import error_bands
from fabricscope.model.error_bands import (
    MIN_RUNS,
    PERCENTILE,
    SERVING,
    SERVING_KEYS,
    BandTable,
    ServingResidual,
    describe,
    serving_band_for,
    serving_ranges,
    table,
)
from fabricscope.model.workloads import load_serving_workload

HOPPER_DENSE = ("hopper", "dense", "fp8")
HOPPER_MOE = ("hopper", "moe", "fp8")
MI300X = ("MI300X-OAM-192GB", "dense", "fp8")


def _residuals(
    cell: tuple[str, str, str], errors: list[float], prefix: str, per_run: int = 3
) -> list[ServingResidual]:
    # each case predicted once per split it takes part in (source, family, generation)
    return [
        ServingResidual(f"{prefix}{i // per_run}", *cell, signed_percent=e)
        for i, e in enumerate(errors)
    ]


def _errors(seed: int, mean: float, spread: float, n: int) -> list[float]:
    return list(np.random.default_rng(seed).normal(mean, spread, n))


@pytest.fixture(scope="module")
def made() -> dict:
    return table(
        [
            *_residuals(HOPPER_DENSE, _errors(1, -3, 15, 3 * MIN_RUNS), "h"),
            *_residuals(HOPPER_MOE, [40.0, -35.0, 50.0, 20.0, 60.0, -10.0], "m"),  # 2 runs
            # a GPU of no known generation, held out by source and family only (twice a run)
            *_residuals(MI300X, _errors(2, 50, 80, 2 * MIN_RUNS), "a", per_run=2),
        ],
        {"source_id": {"mlperf": {"hbm_efficiency": 0.7}}},
        SERVING,
    )


def test_a_cell_holds_the_percentile_of_its_absolute_errors_and_its_signed_median(made):
    cells = {tuple(c[k] for k in SERVING_KEYS): c for c in made["cells"]}
    errors = np.array(_errors(1, -3, 15, 3 * MIN_RUNS))
    cell = cells[HOPPER_DENSE]
    assert (cell["runs"], cell["predictions"]) == (MIN_RUNS, 3 * MIN_RUNS)
    assert cell["percent"] == round(float(np.percentile(np.abs(errors), PERCENTILE)), 1)
    assert cell["bias_percent"] == round(float(np.median(errors)), 1)
    # coarser cells drop the precision, then dense or MoE, then the GPU: every run
    assert cells[("hopper", "dense", None)]["runs"] == MIN_RUNS
    assert cells[("hopper", None, None)]["runs"] == MIN_RUNS + 2
    assert cells[(None, None, None)]["runs"] == 2 * MIN_RUNS + 2
    assert made["keys"] == list(SERVING_KEYS) and made["written_by"] == SERVING.written_by
    assert made["constants"] == {"source_id": {"mlperf": {"hbm_efficiency": 0.7}}}
    assert "output tokens/s per GPU at the latency target" in made["what"]


def test_a_served_cell_falls_back_precision_first_and_says_so(made):
    bands = BandTable(made, SERVING)
    own = bands.band({"generation": "hopper", "architecture": "dense", "precision": "fp8"})
    assert own is not None and own.cell == own.asked and own.runs == MIN_RUNS
    assert own.label == "Hopper FP8 dense" and own.scheme is SERVING
    # BF16 was never measured on Hopper: Hopper dense of any precision, named so
    bf16 = bands.band({"generation": "hopper", "architecture": "dense", "precision": "bf16"})
    assert bf16 is not None and bf16.runs == MIN_RUNS and bf16.percent == own.percent
    assert bf16.label == (
        f"Hopper dense, any precision (fewer than {MIN_RUNS} held-out runs of Hopper BF16 dense)"
    )
    # two MoE runs on Hopper are too few: Hopper of any model and precision
    moe = bands.band({"generation": "hopper", "architecture": "moe", "precision": "fp8"})
    assert moe is not None and moe.runs == MIN_RUNS + 2
    assert moe.label.startswith("Hopper, any precision and model (fewer than")
    # a known generation with no run: every run, and why
    ada = bands.band({"generation": "ada", "architecture": "dense", "precision": "fp8"})
    assert ada is not None and ada.runs == 2 * MIN_RUNS + 2
    assert ada.label == (
        f"any GPU generation, precision and model (fewer than {MIN_RUNS} held-out runs of Ada "
        "Lovelace FP8 dense)"
    )


def test_a_gpu_of_no_generation_has_its_own_cells_only_where_it_was_measured(made):
    bands = BandTable(made, SERVING)
    job = load_serving_workload("llama3-70b-chat")  # FP8 dense
    amd = serving_band_for("MI300X-OAM-192GB", job, bands)
    assert amd is not None and amd.label == "MI300X-OAM-192GB FP8 dense"
    assert amd.runs == MIN_RUNS and amd.predictions == 2 * MIN_RUNS
    unknown = serving_band_for("MI355X-OAM-288GB", job, bands)
    assert unknown is not None and unknown.runs == 2 * MIN_RUNS + 2
    assert unknown.label == (
        "any GPU generation, precision and model (the GPU's generation is not known)"
    )
    hopper = serving_band_for("H200-SXM-141GB", job, bands)
    assert hopper is not None and hopper.label == "Hopper FP8 dense"
    # a MoE model: its own key
    moe = serving_band_for("H100-SXM-80GB", load_serving_workload("deepseek-v3-chat"), bands)
    assert moe is not None and moe.asked["architecture"] == "moe"
    assert BandTable({**made, "cells": []}, SERVING).band(dict(unknown.asked)) is None


def test_the_serving_band_reads_as_tokens_per_second_and_their_price(made):
    band = BandTable(made, SERVING).band(
        {"generation": "hopper", "architecture": "dense", "precision": "fp8"}
    )
    assert band is not None
    text = band.sentence()
    assert text.startswith(
        f"output tokens/s per GPU at the latency target typically within ±{band.percent:.0f}% "
        "for Hopper FP8 dense: the p90 of the held-out errors on 10 published serving runs; "
    )
    assert ("fewer tokens/s" in text) == (round(band.bias_percent) > 0)
    rows = [band.fields(), band.fields(), {"error_band_pct": float("nan")}]
    assert error_bands.notes(rows, SERVING) == [text]
    # a training band reads as it did
    assert error_bands.notes(rows) != [text] and "published runs;" in error_bands.notes(rows)[0]
    assert describe({k: None for k in SERVING_KEYS}, SERVING) == (
        "any GPU generation, precision and model"
    )


def test_the_bands_ends_move_tokens_by_the_error_and_the_price_against_them():
    # 25% off: a GPU serves 1/1.25 to 1/0.75 of the estimate (the worse fabric end to the
    # better), each token's GPU time 0.75 to 1.25 times
    ends = serving_ranges(25.0, 800.0, 1000.0, 2.0)
    assert ends["tokens_per_s_per_gpu_band_low"] == pytest.approx(800 / 1.25)
    assert ends["tokens_per_s_per_gpu_band_high"] == pytest.approx(1000 / 0.75)
    assert ends["usd_per_million_output_tokens_band_low"] == pytest.approx(1.5)
    assert ends["usd_per_million_output_tokens_band_high"] == pytest.approx(2.5)
    # a band of 100% or more: no upper bound on the tokens, no lower bound on the price
    wide = serving_ranges([150.0, float("nan")], 100.0, 100.0, 1.0)
    assert wide["tokens_per_s_per_gpu_band_low"][0] == pytest.approx(40.0)
    assert np.isnan(wide["tokens_per_s_per_gpu_band_high"]).all()
    assert np.isnan(wide["usd_per_million_output_tokens_band_low"]).all()
    assert np.isnan(wide["usd_per_million_output_tokens_band_high"][1])  # no band, no range


def test_the_stored_serving_bands_cover_the_serving_presets_on_every_gpu_measured():
    from fabricscope.model.generations import GENERATIONS
    from fabricscope.model.workloads import serving_presets

    for name in serving_presets():
        job = load_serving_workload(name)
        for gpu in GENERATIONS:
            band = serving_band_for(gpu, job)
            assert band is not None and band.runs >= MIN_RUNS, (name, gpu)
