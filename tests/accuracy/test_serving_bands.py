"""The serving error bands are made of the serving harness's held-out residuals, never
in-sample ones (fabricscope/accuracy/serving_accuracy.py: band_residuals, held_out_bands;
fabricscope/model/serving_error_bands.json)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from fabricscope.accuracy import serving_accuracy
from fabricscope.accuracy.serving_accuracy import (
    SPLITS,
    band_residuals,
    held_out_bands,
    held_out_fits,
    in_split,
    load_scorable,
    read_docs_report,
    report_fits,
    stored_band_fits,
)
from fabricscope.model import error_bands
from fabricscope.model.generations import GENERATIONS


@pytest.fixture(scope="module")
def items():
    return load_scorable()[0]


@pytest.fixture(scope="module")
def stored() -> dict:
    return json.loads(error_bands.SERVING_BANDS_FILE.read_text(encoding="utf-8"))


def test_the_stored_bands_are_the_held_out_fits_rescored(items, stored):
    """Re-scored from the held-out constants the file names (seconds: no fit), every cell
    comes back; those constants are the ones the docs' serving block prints for each
    held-out group (tests/accuracy/test_serving_accuracy.py holds the block to the fits)."""
    fits = stored_band_fits()
    assert set(fits) == set(SPLITS)
    _, documented = report_fits(read_docs_report())
    assert fits == documented
    assert held_out_bands(items, fits) == stored, (
        "fabricscope/model/serving_error_bands.json is out of date: run python -m "
        "fabricscope.accuracy.serving_accuracy --write-bands (or --write-docs)"
    )


def test_every_run_is_predicted_once_per_split_it_is_held_out_in(items, stored):
    # in-sample residuals would be one per case; held out, a case is predicted by each split
    # it takes part in (a GPU of no known generation is not in the generation split)
    every = stored["cells"][-1]
    assert all(every[k] is None for k in error_bands.SERVING_KEYS)
    predicted = sum(in_split(i, by) for i in items for by in SPLITS)
    # every prediction but the few without a plan (no finite error)
    assert 0.99 * predicted <= every["predictions"] <= predicted
    assert 0.99 * len(items) <= every["runs"] <= len(items)
    assert every["predictions"] > 2.5 * every["runs"]
    # an AMD GPU is its own cell, held out twice a run; a Hopper one three times
    amd = [c for c in stored["cells"] if c["generation"] == "MI325X-OAM-256GB"]
    assert amd and all(c["predictions"] == 2 * c["runs"] for c in amd)
    hopper = next(
        c
        for c in stored["cells"]
        if c["generation"] == "hopper" and c["architecture"] is None and c["precision"] is None
    )
    assert hopper["predictions"] == 3 * hopper["runs"]


def test_each_residual_is_a_held_out_prediction_in_its_cases_cell(items):
    sample = [i for i in items if i.case.family == "trtllm"][::40] + [
        i for i in items if i.case.family == "mlperf"
    ][::20]
    fits = stored_band_fits()
    frames = {by: held_out_fits(sample, by, fits[by])[0] for by in ("family", "generation")}
    made = band_residuals(sample, frames)
    counts = Counter(r.run_id for r in made)
    for item in sample:
        expected = 1 + (item.case.gpu_model in GENERATIONS)
        assert counts[item.case.case_id] in (expected, 0)  # 0: no plan
    first = next(r for r in made if r.run_id == frames["family"]["case_id"].iloc[0])
    row = frames["family"].iloc[0]
    assert first.signed_percent == pytest.approx(row["error"] * 100)
    item = next(i for i in sample if i.case.case_id == first.run_id)
    assert first.generation == error_bands.serving_gpu_key(item.case.gpu_model)
    assert first.precision == item.job.weights
    assert first.architecture == ("moe" if item.job.architecture.moe is not None else "dense")


def test_write_bands_runs_every_split_and_writes_the_file(monkeypatch, tmp_path, capsys):
    calls = []

    def fake(items, split_fits=None):
        calls.append(split_fits)
        return error_bands.table([], {}, error_bands.SERVING)

    monkeypatch.setattr(serving_accuracy, "held_out_bands", fake)
    monkeypatch.setattr(serving_accuracy, "load_scorable", lambda: ([], []))
    monkeypatch.setattr(error_bands, "SERVING_BANDS_FILE", tmp_path / "bands.json")
    serving_accuracy.main(["--write-bands"])
    assert calls == [None]  # fitted, not read back from a report
    written = json.loads((tmp_path / "bands.json").read_text(encoding="utf-8"))
    assert written["written_by"] == error_bands.SERVING_WRITTEN_BY
    assert "wrote bands.json" in capsys.readouterr().out
