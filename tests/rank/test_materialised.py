"""Materialised rankings served back: the same answer as ranking live, or none at all."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from fabricscope.model.workloads import preset
from fabricscope.rank.materialised import (
    materialise,
    materialised_rankings,
    materialised_result,
    ranking_version,
)
from fabricscope.rank.ranking import RankRequest, rank, read_inputs
from fabricscope.warehouse.db import read_frame
from tests.helpers import AS_OF, ROOT, fabricscope


def _same(live: pd.DataFrame, served: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        live.reset_index(drop=True), served.reset_index(drop=True), check_dtype=False
    )


def test_every_stored_ranking_is_served_as_the_live_ranking(fixture_warehouse):
    """Offers (every column, in order), exclusions and providers: as `rank` gives them."""
    inputs = read_inputs(fixture_warehouse)
    for item in materialised_rankings():
        job = item.request()
        served = materialised_result(fixture_warehouse, inputs, job, AS_OF)
        assert served is not None, f"{item} was materialised by the refresh"
        live = rank(inputs, job, AS_OF)
        assert len(served.offers) > 0
        _same(live.offers, served.offers)
        _same(live.excluded, served.excluded)
        _same(live.providers, served.providers)
        assert served.profiles_estimated == live.profiles_estimated
        # what the page does next with a result works on a served one alike
        _same(live.what_if("ethernet").offers, served.what_if("ethernet").offers)


def test_a_served_ranking_ages_its_prices_at_the_time_asked(fixture_warehouse):
    inputs = read_inputs(fixture_warehouse)
    job = materialised_rankings()[0].request()
    first = materialised_result(fixture_warehouse, inputs, job, AS_OF)
    later = materialised_result(fixture_warehouse, inputs, job, AS_OF + timedelta(days=10))
    assert first is not None and later is not None
    assert (later.offers["data_age_days"] - first.offers["data_age_days"]).round(2).eq(10).all()
    assert later.as_of == AS_OF + timedelta(days=10)


def test_another_request_is_not_served(fixture_warehouse):
    inputs = read_inputs(fixture_warehouse)
    stored = materialised_rankings()[0].request()
    others = [
        stored.model_copy(update={"gpu_counts": (128,)}),
        stored.model_copy(update={"objective": "time"}),
        stored.model_copy(update={"max_price_age_days": 3650.0}),  # an age limit moves
        RankRequest(workload=preset("llama3-8b").model_copy(update={"seq_len": 4096}),
                    gpu_counts=(64,)),
    ]  # fmt: skip
    for other in others:
        assert materialised_result(fixture_warehouse, inputs, other, AS_OF) is None, other


def _copy(fixture_warehouse: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, copy)
    return copy


def test_nothing_is_served_once_a_newer_snapshot_is_published(fixture_warehouse, tmp_path):
    """A calibration published after the estimates changes the answer: rank it live."""
    copy = _copy(fixture_warehouse, tmp_path)
    job = materialised_rankings()[0].request()
    assert materialised_result(copy, read_inputs(copy), job, AS_OF) is not None
    stored = fabricscope(
        "calibrate", str(ROOT / "fixtures" / "nccl_tests" / "roce_2n_16g_all_reduce.txt"),
        "--provider", "oracle", "--fabric-class", "roce", "--warehouse", str(copy),
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    assert materialised_result(copy, read_inputs(copy), job, AS_OF) is None
    # materialised again over the calibrated offers, it is served again, and equals live
    count, info = materialise(copy)
    assert count > 0 and info is not None
    inputs = read_inputs(copy)
    served = materialised_result(copy, inputs, job, AS_OF)
    assert served is not None
    _same(rank(inputs, job, AS_OF).offers, served.offers)


def test_a_ranking_stored_by_other_code_is_not_served(fixture_warehouse, tmp_path):
    copy = _copy(fixture_warehouse, tmp_path)
    job = materialised_rankings()[0].request()
    with duckdb.connect(str(copy)) as con:
        (stored,) = con.execute("select distinct ranking_version from estimate_rankings").fetchone()
        assert stored == ranking_version()
        con.execute("update estimate_rankings set ranking_version = 'older-model'")
    assert materialised_result(copy, read_inputs(copy), job, AS_OF) is None


def test_a_warehouse_from_before_the_served_rankings_is_ranked_live(fixture_warehouse, tmp_path):
    copy = _copy(fixture_warehouse, tmp_path)
    with duckdb.connect(str(copy)) as con:
        con.execute("drop table estimate_rankings")
    job = materialised_rankings()[0].request()
    assert materialised_result(copy, read_inputs(copy), job, AS_OF) is None


def test_only_the_latest_rankings_keep_their_exclusions(fixture_warehouse, tmp_path):
    copy = _copy(fixture_warehouse, tmp_path)
    materialise(copy)
    _, kept = read_frame(
        copy,
        "select count(distinct snapshot_id) as snapshots, count(*) as n from estimate_exclusions",
    )
    _, rankings = read_frame(
        copy, "select sum(excluded) as n from estimate_rankings "
        "where snapshot_id = (select max(snapshot_id) from estimate_rankings)"
    )  # fmt: skip
    assert int(kept["snapshots"].iloc[0]) == 1
    assert int(kept["n"].iloc[0]) == int(rankings["n"].iloc[0])


@pytest.mark.parametrize(
    "name", ["estimate_rankings", "estimate_exclusions", "serving_estimates_current"]
)
def test_the_served_tables_are_readable_by_anyone(name):
    from fabricscope.warehouse.db import PUBLISHED_RELATIONS

    assert name in PUBLISHED_RELATIONS


def test_the_serving_presets_are_materialised_for_analysts(fixture_warehouse):
    """Each serving preset in rankings.json has ranked rows in serving_estimates_current, with
    its cost per million tokens, and its request stored beside the training rankings'."""
    serving = [item for item in materialised_rankings() if item.serve]
    assert {item.preset for item in serving} >= {"llama3-70b-chat", "llama3-405b-bf16"}
    _, rows = read_frame(
        fixture_warehouse,
        "select workload, count(*) as n, min(usd_per_million_output_tokens) as usd, "
        "bool_and(tpot_ms <= 200) as fast from serving_estimates_current group by workload",
    )
    rows = rows.set_index("workload")
    for item in serving:
        assert rows.loc[item.preset, "n"] > 0 and rows.loc[item.preset, "usd"] > 0
    assert rows.loc["llama3-70b-chat", "fast"]  # its TPOT target is 200 ms
    _, stored = read_frame(fixture_warehouse, "select request_json from estimate_rankings")
    assert stored["request_json"].str.contains('"kind"').sum() == 0
    assert stored["request_json"].str.contains('"input_tokens"').sum() == len(serving)
