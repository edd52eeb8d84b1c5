"""The procurement shortlist: CSV, XLSX and memo, from a warehouse built from the fixtures."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from pipeline import ranking, shortlist, transparency
from pipeline.ranking import RANKED_COLUMNS, RankRequest, parse_gpu_counts
from pipeline.workloads import preset
from tests.helpers import fabricscope


def request(name: str, gpus: str, **extra) -> RankRequest:
    return RankRequest(workload=preset(name), gpu_counts=parse_gpu_counts(gpus), **extra)


@pytest.fixture(scope="module")
def written(fixture_warehouse, tmp_path_factory):
    picked = shortlist.build(fixture_warehouse, request("mixtral-8x7b", "256"), top=4)
    prefix = tmp_path_factory.mktemp("shortlist") / "mixtral"
    return picked, shortlist.write(picked, prefix)


def assert_same_rows(read: pd.DataFrame, rows: pd.DataFrame) -> None:
    assert list(read.columns) == RANKED_COLUMNS
    assert len(read) == len(rows)
    for column in RANKED_COLUMNS:
        ours = rows[column]
        theirs = read[column]
        if pd.api.types.is_numeric_dtype(ours) and not pd.api.types.is_bool_dtype(ours):
            np.testing.assert_allclose(
                theirs.astype(float), ours.astype(float), rtol=1e-12, err_msg=column
            )
        elif column.endswith("_at"):
            # a workbook stores times to the millisecond (Excel's date serial): compare at that
            assert [pd.Timestamp(t).round("ms") if pd.notna(t) else None for t in theirs] == [
                pd.Timestamp(t).tz_convert("UTC").tz_localize(None).round("ms")
                if pd.notna(t) and pd.Timestamp(t).tzinfo
                else (pd.Timestamp(t).round("ms") if pd.notna(t) else None)
                for t in ours
            ], column
        elif all(isinstance(v, bool) for v in ours.dropna()) and ours.isna().any():
            # true, false or unknown (multi_node): a workbook reads such a column as 1.0/0.0/NaN
            mine = [None if pd.isna(v) else bool(v) for v in ours]
            assert [None if pd.isna(v) else bool(v) for v in theirs] == mine, column
        else:
            mine = [None if pd.isna(v) else v for v in ours]
            back = [None if pd.isna(v) else v for v in theirs]
            assert [str(v) for v in back] == [str(v) for v in mine], column


def test_the_csv_reads_back_as_the_ranking_rows(written):
    picked, (csv_path, _, _) = written
    read = pd.read_csv(csv_path)
    rows = picked.rows.copy()
    for column in ("price_observed_at", "fabric_observed_at"):
        read[column] = pd.to_datetime(read[column], utc=True, format="ISO8601")
    assert list(read["offer_key"]) == list(picked.result.offers["offer_key"].head(4))
    numeric = [c for c in RANKED_COLUMNS if pd.api.types.is_float_dtype(rows[c])]
    for column in numeric:
        np.testing.assert_allclose(read[column], rows[column], rtol=1e-12, err_msg=column)
    assert (read["snapshot_id"] == picked.snapshot_id).all()
    assert read["price_source_url"].notna().all()


def test_the_workbook_holds_every_sheet_and_the_same_rows(written):
    picked, (_, xlsx_path, _) = written
    sheets = pd.read_excel(xlsx_path, sheet_name=None)
    providers = list(dict.fromkeys(picked.rows["provider"]))
    assert list(sheets) == [
        "shortlist",
        "assumptions",
        "transparency",
        "fabric sensitivity",
        *[f"RFI {p}" for p in providers],
    ]
    assert_same_rows(sheets["shortlist"], picked.rows)
    facts = sheets["assumptions"].set_index("name")["value"]
    assert int(facts["snapshot_id"]) == picked.snapshot_id
    assert "eta_compute_max" in facts.index and "hidden_size" in facts.index
    answers = sheets["transparency"]
    assert set(answers["provider"]) == set(providers)
    known = answers[answers["answer"] != "unknown"]
    assert known["source_url"].notna().all() and known["observed_at"].notna().all()
    for provider in providers:
        rfi = sheets[f"RFI {provider}"]
        assert list(rfi["question_id"].fillna("")) == [
            q.id for q in picked.open_questions[provider]
        ]


def test_the_memo_asks_exactly_the_unanswered_questions(written):
    picked, (_, _, memo_path) = written
    text = memo_path.read_text(encoding="utf-8")
    sections = re.split(
        r"^### ", text.split("## Questions to send each provider", 1)[1], flags=re.M
    )
    asked = {}
    for section in sections[1:]:
        provider = section.split(" ", 1)[0].split("\n", 1)[0]
        body = section.split("## Sources", 1)[0]
        asked[provider] = re.findall(r"^\d+\. (.+?)(?: \(what we know: .*)?$", body, flags=re.M)
    answers = list(picked.result.answers)
    for provider in dict.fromkeys(picked.rows["provider"]):
        expected = [q.text for q in transparency.open_questions(answers, provider)]
        assert asked[provider] == expected, provider
    assert f"snapshot {picked.snapshot_id}" in text
    assert "megatron software stack" in text, "the memo says which stack the job was costed on"
    # every shortlisted offer is in the memo's table, with its rank
    for _, row in picked.rows.iterrows():
        assert f"| {row['rank']} | {row['provider']} | {row['instance_type']}" in text


def test_the_fabric_sensitivity_never_favours_ethernet(written):
    picked, _ = written
    table = picked.sensitivity
    assert (table["time_to_train_h_ethernet"] >= table["time_to_train_h_infiniband"]).all()
    assert (table["cost_usd_ethernet"] >= table["cost_usd_infiniband"]).all()


def test_export_numbers_equal_what_rank_prints(fixture_warehouse, tmp_path):
    prefix = tmp_path / "out" / "llama"
    done = fabricscope(
        "export", "--shortlist", "-w", "llama3-70b", "--gpus", "512", "--top", "3",
        "--output", str(prefix), "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for suffix in (".csv", ".xlsx", ".md"):
        assert prefix.with_name("llama" + suffix).is_file()
    ranked = fabricscope(
        "rank", "-w", "llama3-70b", "--gpus", "512", "--format", "json",
        "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    shown = json.loads(ranked.stdout)["offers"][:3]
    exported = pd.read_csv(prefix.with_name("llama.csv"))
    assert list(exported["offer_key"]) == [r["offer_key"] for r in shown]
    np.testing.assert_allclose(exported["cost_usd"], [r["cost_usd"] for r in shown], rtol=1e-12)
    np.testing.assert_allclose(
        exported["time_to_train_h"], [r["time_to_train_h"] for r in shown], rtol=1e-12
    )

    picked_by_key = fabricscope(
        "export", "--shortlist", "-w", "llama3-70b", "--gpus", "512",
        "--offer", shown[2]["offer_key"], "--offer", shown[0]["offer_key"],
        "--output", str(tmp_path / "two"), "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert picked_by_key.returncode == 0, picked_by_key.stderr
    two = pd.read_csv(tmp_path / "two.csv")
    assert list(two["offer_key"]) == [shown[0]["offer_key"], shown[2]["offer_key"]]  # rank order


def test_bad_shortlist_requests_are_one_line_errors(fixture_warehouse, tmp_path):
    common = ["export", "--shortlist", "-w", "llama3-8b", "--gpus", "8"]
    where = ["--warehouse", str(fixture_warehouse)]
    cases = [
        ([*common, "--output", str(tmp_path / "x"), *where], "either --top"),
        ([*common, "--top", "2", *where], "--output"),
        ([*common, "--top", "2", "--offer", "a/b/-/on_demand", "-o", str(tmp_path / "x"), *where],
         "either --top"),
        ([*common, "--offer", "nope/x/-/on_demand", "-o", str(tmp_path / "x"), *where],
         "not in the ranking"),
        ([*common, "--top", "0", "-o", str(tmp_path / "x"), *where], "at least 1"),
    ]  # fmt: skip
    for args, message in cases:
        done = fabricscope(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_a_failed_write_leaves_no_partial_file(written, tmp_path, monkeypatch):
    picked, _ = written

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(shortlist, "_write_xlsx", broken)
    with pytest.raises(OSError, match="disk full"):
        shortlist.write(picked, tmp_path / "memo")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memo.csv"]  # written before, whole


def test_shortlist_from_a_ranking_keeps_rank_order_and_refuses_empty(fixture_warehouse):
    result = ranking.rank(fixture_warehouse, request("llama3-8b", "64"))
    keys = list(result.offers["offer_key"])
    picked = shortlist.from_result(result, offer_keys=[keys[3], keys[1]])
    assert list(picked.rows["offer_key"]) == [keys[1], keys[3]]
    none = ranking.rank(fixture_warehouse, request("llama3-8b", "64", max_budget_usd=1.0))
    with pytest.raises(shortlist.ShortlistError, match="no offer qualifies"):
        shortlist.from_result(none, top=3)
