"""A ranked training row carries the model's held-out error for its kind of job
(TrainingEstimator.annotate, fabricscope/model/error_bands.py); a served row the serving
model's (ServingEstimator.annotate)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fabricscope.model.error_bands import (
    FIELDS,
    SERVING,
    SERVING_RANGE_FIELDS,
    band_for,
    serving_band_for,
)
from fabricscope.model.workloads import load_serving_workload, preset
from fabricscope.rank.ranking import BAND_COLUMNS, RankRequest, rank_offers, what_if_changes
from tests.rank.test_ranking import request, synthetic_offer


def test_each_row_carries_its_gpus_band_and_the_time_and_cost_at_its_ends():
    offers = pd.DataFrame(
        [
            synthetic_offer("ib", "infiniband", 2.50),
            synthetic_offer("open", None, 2.10),  # fabric unknown: a range of times
            synthetic_offer(
                "amd", "infiniband", 2.00, gpu_model="MI300X-OAM-192GB", gpu_name="MI300X"
            ),
            synthetic_offer(
                "old", "infiniband", 1.50, gpu_model="A100-SXM-80GB", gpu_name="A100 80GB"
            ),
        ]
    )
    result = rank_offers(offers, request("llama3-70b", "64"))
    rows = result.offers.set_index("provider")
    assert set(rows.index) == {"ib", "open", "amd", "old"}
    assert set(BAND_COLUMNS) <= set(result.columns) and list(result.offers.columns) == (
        result.columns
    )
    job = preset("llama3-70b")
    for provider, gpu in (
        ("ib", "H100-SXM-80GB"),
        ("amd", "MI300X-OAM-192GB"),
        ("old", "A100-SXM-80GB"),
    ):
        band = band_for(gpu, job)
        assert band is not None
        row = rows.loc[provider]
        assert (row["error_band_pct"], row["error_bias_pct"]) == (band.percent, band.bias_percent)
        assert (row["error_band_runs"], row["error_band_cell"]) == (band.runs, band.label)
    assert rows.loc["ib", "error_band_cell"].startswith("Hopper BF16 dense")
    assert rows.loc["old", "error_band_cell"] == "Ampere BF16 dense on Megatron"
    # a GPU of no known generation: every run's band, said so
    assert rows.loc["amd", "error_band_cell"] == (
        "any GPU generation, precision, model and stack (the GPU's generation is not known)"
    )
    # the band widens the fabric's range: the worse end up, the better end down
    open_row = rows.loc["open"]
    share = open_row["error_band_pct"] / 100
    assert open_row["time_to_train_h_low"] < open_row["time_to_train_h"]
    assert open_row["time_to_train_h_band_high"] == pytest.approx(
        open_row["time_to_train_h"] * (1 + share)
    )
    assert open_row["time_to_train_h_band_low"] == pytest.approx(
        open_row["time_to_train_h_low"] * (1 - share)
    )
    assert open_row["cost_usd_band_low"] == pytest.approx(open_row["cost_usd_low"] * (1 - share))
    assert open_row["cost_usd_band_high"] == pytest.approx(open_row["cost_usd"] * (1 + share))
    # and the providers' table says each best offer's band, the what-if the same band
    providers = result.providers.set_index("provider")
    assert providers.loc["old", "error_band_pct"] == rows.loc["old", "error_band_pct"]
    changes = what_if_changes(result, result.what_if("ethernet")).set_index("provider")
    assert list(changes["error_band_cell"]) == list(rows.loc[changes.index, "error_band_cell"])


def test_a_band_of_100_percent_or_more_bounds_the_tokens_from_below_only():
    # a dense FP8 model served on MI300X: its held-out serving runs err by more than 100%
    # (no training cell does since the experts' GEMM calls are costed; error_bands.ranges and
    # serving_ranges are the same rule, tests/model/test_error_bands.py)
    job = load_serving_workload("llama3-70b-chat")
    offers = pd.DataFrame(
        [
            synthetic_offer(
                "amd", "infiniband", 2.00, gpu_model="MI300X-OAM-192GB", gpu_name="MI300X"
            )
        ]
    )
    result = rank_offers(offers, RankRequest(workload=job, gpu_counts=(8,)))
    band = serving_band_for("MI300X-OAM-192GB", job)
    assert band is not None and band.percent >= 100
    row = result.offers.iloc[0]
    assert row["error_band_pct"] == band.percent
    # no upper bound on the tokens nor lower bound on the price; the other ends hold
    assert np.isnan(row["tokens_per_s_per_gpu_band_high"])
    assert np.isnan(row["usd_per_million_output_tokens_band_low"])
    assert row["tokens_per_s_per_gpu_band_low"] == pytest.approx(
        row["tokens_per_s_per_gpu"] / (1 + band.percent / 100)
    )
    assert row["usd_per_million_output_tokens_band_high"] > 2 * row["usd_per_million_output_tokens"]


def test_a_serving_ranking_carries_the_serving_band_not_the_training_one():
    # the band's fields are shared; the training time and cost at its ends are not a served
    # row's, and the band is the serving model's (fabricscope/model/serving_error_bands.json)
    job = load_serving_workload("llama3-8b-chat")
    result = rank_offers(
        pd.DataFrame([synthetic_offer("ib", "infiniband", 2.50)]),
        RankRequest(workload=job, gpu_counts=(8,)),
    )
    training_only = set(BAND_COLUMNS) - set(FIELDS)
    assert not training_only & set(result.columns)
    assert not training_only & set(result.offers.columns)
    assert set(FIELDS) | set(SERVING_RANGE_FIELDS) <= set(result.offers.columns)
    row = result.offers.iloc[0]
    band = serving_band_for("H100-SXM-80GB", job)
    assert band is not None and band.scheme is SERVING
    assert (row["error_band_pct"], row["error_band_cell"]) == (band.percent, band.label)
    assert row["error_band_runs"] == band.runs
    assert row["tokens_per_s_per_gpu_band_low"] == pytest.approx(
        row["tokens_per_s_per_gpu"] / (1 + band.percent / 100)
    )
    assert row["usd_per_million_output_tokens_band_high"] == pytest.approx(
        row["usd_per_million_output_tokens"] * (1 + band.percent / 100)
    )
    assert result.providers.iloc[0]["error_band_pct"] == band.percent
