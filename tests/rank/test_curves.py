"""Curves that explain a ranking: time and whole cost against the GPU count and against the
bandwidth per GPU, each point the ranking itself at that count or bandwidth."""

from __future__ import annotations

import pandas as pd
import pytest

from fabricscope.model.workloads import preset
from fabricscope.procurement import shortlist
from fabricscope.rank import curves
from fabricscope.rank.ranking import RankRequest, rank_offers
from tests.rank.test_ranking import synthetic_offer


@pytest.fixture(scope="module")
def ranked():
    offers = pd.DataFrame(
        [
            synthetic_offer("ib", "infiniband", 2.5),
            synthetic_offer("eth", "ethernet", 2.0),
            synthetic_offer("mystery", None, 2.2),
        ]
    )
    return rank_offers(offers, RankRequest(workload=preset("mixtral-8x7b"), gpu_counts=(256,)))


def test_every_point_is_the_ranking_at_that_count(ranked):
    keys = list(ranked.offers["offer_key"])
    frame = curves.gpu_count_curves(ranked, keys)
    assert set(frame["offer_key"]) == set(keys)
    counts = sorted(set(frame["gpus"]))
    assert counts == [32, 64, 128, 256, 512, 1024, 2048]
    # the point at the ranked count is the ranked row
    at = frame[frame["gpus"] == 256].set_index("offer_key")
    rows = ranked.offers.set_index("offer_key")
    for key in keys:
        assert at.loc[key, "time_to_train_h"] == pytest.approx(rows.loc[key, "time_to_train_h"])
        assert at.loc[key, "total_cost_usd"] == pytest.approx(rows.loc[key, "total_cost_usd"])
    # a point elsewhere is the ranking asked for that count
    alone = rank_offers(
        ranked.catalog,
        ranked.request.model_copy(update={"gpu_counts": (1024,)}),
    ).offers.set_index("offer_key")
    there = frame[frame["gpus"] == 1024].set_index("offer_key")
    assert there.loc[keys[0], "time_to_train_h"] == pytest.approx(
        alone.loc[keys[0], "time_to_train_h"]
    )


def test_time_falls_with_more_gpus_and_more_bandwidth_where_the_model_does(ranked):
    keys = list(ranked.offers["offer_key"])
    on_ib = ranked.offers.loc[ranked.offers["provider"] == "ib", "offer_key"].iloc[0]
    counts = curves.gpu_count_curves(ranked, keys)
    ib = counts[counts["offer_key"] == on_ib].sort_values("gpus")
    assert ib["time_to_train_h"].is_monotonic_decreasing  # InfiniBand: more GPUs, less time
    assert ib["verdict"].notna().all()
    bandwidth = curves.bandwidth_curves(ranked, keys)
    for key, rows in bandwidth.groupby("offer_key"):
        rows = rows.sort_values("x")
        assert list(rows["x"]) == list(curves.GBPS_PER_GPU)
        assert rows["time_to_train_h"].is_monotonic_decreasing, key
        assert rows["comm_fraction_exposed"].is_monotonic_decreasing, key
    assumed = bandwidth.set_index("offer_key")["assumed"]
    mystery = ranked.offers.loc[ranked.offers["provider"] == "mystery", "offer_key"].iloc[0]
    assert (assumed.loc[mystery] == "InfiniBand assumed").all()
    assert assumed.loc[on_ib].isna().all()


def test_one_node_jobs_have_no_bandwidth_curve():
    offers = pd.DataFrame([synthetic_offer("ib", "infiniband", 2.5)])
    result = rank_offers(offers, RankRequest(workload=preset("llama3-8b"), gpu_counts=(8,)))
    assert curves.bandwidth_curves(result, list(result.offers["offer_key"])).empty
    assert not curves.gpu_count_curves(result, list(result.offers["offer_key"])).empty


def test_the_memo_and_the_workbook_carry_the_curves(ranked, tmp_path):
    chosen = shortlist.from_result(ranked, top=2)
    memo = shortlist.memo(chosen)
    assert "## How time and cost move" in memo
    assert "| Gb/s per GPU | days | whole cost | exposed communication |" in memo
    written = shortlist.write(chosen, tmp_path / "curves")
    sheet = pd.read_excel(written[1], sheet_name="curves")
    assert len(sheet) == len(chosen.curves) > 0
