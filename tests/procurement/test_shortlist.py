"""The procurement shortlist: CSV, XLSX and memo, from a warehouse built from the fixtures."""

from __future__ import annotations

import json
import re

import numpy as np
import openpyxl
import pandas as pd
import pytest

from fabricscope.evidence import transparency
from fabricscope.model.workloads import preset
from fabricscope.procurement import shortlist
from fabricscope.rank import ranking
from fabricscope.rank.ranking import RANKED_COLUMNS, RankRequest, parse_gpu_counts
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
    picked, (csv_path, _, _, _) = written
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


def rows_of_the_workbook(path) -> pd.DataFrame:
    """The shortlist and details sheets read back into ranking rows: headers to column names,
    days to hours."""
    names = {spec.header: name for name, spec in shortlist.COLUMNS.items()}
    main = pd.read_excel(path, sheet_name="shortlist").rename(columns=names)
    details = pd.read_excel(path, sheet_name="details").rename(columns=names)
    rows = pd.concat([main, details.drop(columns=list(shortlist.ROW_IDENTITY))], axis=1)
    for name in rows.columns:
        if shortlist.column(name).scale != 1.0:
            rows[name] = rows[name] / shortlist.column(name).scale
    return rows[RANKED_COLUMNS]


def test_the_workbook_holds_every_sheet_and_the_same_rows(written):
    picked, (_, xlsx_path, _, _) = written
    sheets = pd.read_excel(xlsx_path, sheet_name=None)
    providers = list(dict.fromkeys(picked.rows["provider"]))
    assert list(sheets) == [
        "shortlist",
        "details",
        "assumptions",
        "transparency",
        "fabric sensitivity",
        "side by side",
        "curves",
        *[f"RFI {p}" for p in providers],
    ]
    assert_same_rows(rows_of_the_workbook(xlsx_path), picked.rows)
    sheets = {
        name: sheet.rename(columns={s.header: n for n, s in shortlist.COLUMNS.items()})
        for name, sheet in sheets.items()
    }
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


def test_every_column_has_one_human_header():
    named = [*RANKED_COLUMNS, *shortlist.COLUMNS]
    headers = [shortlist.column(name).header for name in dict.fromkeys(named)]
    assert all(name in shortlist.COLUMNS for name in RANKED_COLUMNS)
    assert len(set(headers)) == len(headers), "two columns would read the same"
    assert not [h for h in headers if "_" in h or h[0].islower()]


def test_the_workbook_reads_as_a_buyer_would(written):
    picked, (_, xlsx_path, _, _) = written
    book = openpyxl.load_workbook(xlsx_path)
    main, details = book["shortlist"], book["details"]
    headers = [cell.value for cell in main[1]]
    # the decisive columns first, on a sheet of their own; every other column on details
    assert headers == [shortlist.column(name).header for name in shortlist.SHORTLIST_COLUMNS]
    assert headers[:6] == [
        "Rank",
        "Provider (runs on)",
        "Offer",
        "GPU model",
        "GPUs per node",
        "GPUs",
    ]
    assert {"Who you pay", "Offer id", "Price per GPU-hour (USD)"} <= set(headers)
    assert "Time to train (days)" in headers
    assert {
        "Whole cost (USD)",
        "GPU time (USD)",
        "MFU",
        "Exposed communication (share of step)",
        "Verdict",
    } <= set(headers)
    rest = [cell.value for cell in details[1]]
    assert rest[:3] == headers[:3]
    assert sorted(headers + rest[3:]) == sorted(shortlist.column(c).header for c in RANKED_COLUMNS)

    formats = {cell.value: main.cell(row=2, column=cell.column).number_format for cell in main[1]}
    assert formats["Whole cost (USD)"] == '"$"#,##0'
    assert formats["Price per GPU-hour (USD)"] == '"$"#,##0.00'
    assert formats["Time to train (days)"] == "#,##0.0"
    assert formats["MFU"] == "0%"
    assert formats["Exposed communication (share of step)"] == "0.0%"
    assert formats["GPUs"] == formats["GPUs per node"] == "#,##0"
    # the cells keep full precision (openpyxl writes 16 significant digits, "%.16g", as a
    # spreadsheet holds them): days are hours / 24, shares stay fractions
    column = {cell.value: cell.column for cell in main[1]}
    days = [main.cell(row=r, column=column["Time to train (days)"]).value for r in range(2, 6)]
    np.testing.assert_allclose(days, picked.rows["time_to_train_h"] / 24, rtol=1e-15)
    mfu = [main.cell(row=r, column=column["MFU"]).value for r in range(2, 6)]
    np.testing.assert_allclose(mfu, picked.rows["mfu"], rtol=1e-15)
    assert max(mfu) < 1

    for sheet in book.worksheets:
        header = sheet[1]
        assert all(cell.font.b for cell in header), sheet.title
        assert sheet.freeze_panes in ("A2", "D2"), sheet.title  # the header, and who/what
        for cell in header:
            width = sheet.column_dimensions[cell.column_letter].width
            assert 4 <= width <= shortlist.MAX_WIDTH, (sheet.title, cell.value, width)
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                # no measure is left in General (the assumptions' values are of mixed units)
                measure = isinstance(cell.value, float) or header[cell.column - 1].value == "GPUs"
                if measure and sheet.title != "assumptions":
                    assert cell.number_format != "General", (sheet.title, header[cell.column - 1])
                assert cell.value not in ("NULL", "nan", "None", "NaT", ""), (sheet.title, cell)
    # widths fit the content: the offer column as wide as its longest label (and a margin)
    longest = max(len(name) for name in picked.rows["offer_label"])
    assert main.column_dimensions["C"].width == min(longest + 2, shortlist.MAX_WIDTH)
    assert main.column_dimensions["A"].width < 10  # "Rank", and numbers of a digit or two
    # unknown values are empty cells, not 0
    unknown = details.cell(row=1, column=rest.index("Fabric per GPU (Gb/s)") + 1).column
    for r, value in enumerate(picked.rows["fabric_gbps_per_gpu"], start=2):
        cell = details.cell(row=r, column=unknown).value
        assert cell is None if pd.isna(value) else cell == value


def test_the_memo_asks_exactly_the_unanswered_questions(written):
    picked, (_, _, memo_path, _) = written
    text = memo_path.read_text(encoding="utf-8")
    questions = text.split("## Questions to send each provider", 1)[1]
    questions = questions.split("## Before you accept the cluster", 1)[0]
    sections = re.split(r"^### ", questions, flags=re.M)
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
    # every shortlisted offer is in the memo's table, with its rank, GPU, GPUs per node, label,
    # id and who sells it
    for _, row in picked.rows.iterrows():
        gpu = ranking.gpu_name(row["gpu_model"])
        assert (
            f"| {row['rank']} | {row['provider']} | {gpu} | {row['gpus_per_node']} | "
            f"{row['offer_label']} (`{row['instance_type']}`, "
        ) in text
        assert f"| {row['sold_and_run_by']} | {row['gpus']} |" in text


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


def test_a_resellers_offer_says_who_sells_it_and_where_it_runs(fixture_warehouse, tmp_path):
    """Prime Intellect's catalog lists a Nebius machine at Prime Intellect's price: the memo,
    the CSV and the workbook say "sold by Prime Intellect, runs on Nebius", and the memo's
    questions for Nebius say whom to ask for the quote."""
    result = ranking.rank(fixture_warehouse, request("llama3-70b", "512"))
    offers = result.offers
    resold = offers[(offers["sold_by"] == "prime_intellect") & (offers["provider"] == "nebius")]
    assert len(resold), "the fixture warehouse holds Prime Intellect's Nebius listings"
    row = resold.iloc[0]
    direct = offers[offers["sold_by"] == offers["provider"]].iloc[0]
    picked = shortlist.from_result(result, offer_keys=[row["offer_key"], direct["offer_key"]])
    csv_path, xlsx_path, memo_path, _ = shortlist.write(picked, tmp_path / "resold")

    said = "sold by Prime Intellect, runs on Nebius"
    exported = pd.read_csv(csv_path).set_index("offer_key")
    assert exported.loc[row["offer_key"], "sold_by"] == "prime_intellect"
    assert exported.loc[row["offer_key"], "sold_and_run_by"] == said
    assert exported.loc[row["offer_key"], "provider"] == "nebius"
    assert "SkyPilot's catalog" in exported.loc[row["offer_key"], "price_published_by"]
    assert exported.loc[direct["offer_key"], "sold_and_run_by"].startswith("sold by ")
    assert "runs on" not in exported.loc[direct["offer_key"], "sold_and_run_by"]

    sheet = pd.read_excel(xlsx_path, sheet_name="shortlist")
    assert said in list(sheet["Who you pay"])
    assert row["offer_label"] in list(sheet["Offer"])
    assert row["instance_type"] in list(sheet["Offer id"])

    text = memo_path.read_text(encoding="utf-8")
    assert f"| {said} |" in text
    questions = text.split("### nebius", 1)[1].split("\n### ", 1)[0]
    assert said in questions and "ask Prime Intellect for the quote" in questions
    assert "not one Nebius published" in questions
    assert f"({said}): price" in text.split("## Sources", 1)[1]


def test_side_by_side_puts_up_to_four_offers_in_columns(written):
    picked, (_, xlsx_path, _, _) = written
    frame = shortlist.side_by_side(picked)
    rows = picked.rows.head(shortlist.SIDE_BY_SIDE_MAX)
    assert list(frame.columns[1:]) == [
        f"#{r['rank']} {ranking.provider_name(r['provider'])} {r['instance_type']}"
        for _, r in rows.iterrows()
    ]
    what = list(frame["what"])
    for needed in (
        "Fabric evidence",
        "Time to train",
        "Whole cost",
        "GPUs billed",
        "Storage",
        "Questions still open",
        "Acceptance: all-reduce",
    ):
        assert needed in what
    cost = frame.set_index("what").loc["Whole cost"].iloc[0]
    first = rows.iloc[0]
    assert cost.startswith(f"${first['total_cost_usd_low']:,.0f}".split(".")[0][:4])
    sheet = pd.read_excel(xlsx_path, sheet_name="side by side")
    assert list(sheet.columns) == ["What", *frame.columns[1:]]
    assert sheet.set_index("What").loc["Time to train"].iloc[0].endswith(" days")
