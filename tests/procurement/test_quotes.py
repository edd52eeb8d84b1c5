"""Quotes the buyer entered: imported from CSV and JSON, bad rows refused with their line and
field, stored once and untouched by refreshes, and ranked beside the list offers."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pytest

from fabricscope.model.workloads import preset
from fabricscope.procurement import quotes, rfi, shortlist
from fabricscope.rank.ranking import RankRequest, parse_gpu_counts, rank
from fabricscope.warehouse.db import current_snapshot, read_frame
from fabricscope.warehouse.models import QUOTE_FIELDS, PricingTier
from tests.helpers import ROOT, fabricscope, publish_synthetic

ENTERED_AT = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
NOW = datetime(2026, 12, 15, tzinfo=UTC)
HEADER = (
    "provider,sold_by,configuration,gpu_model,gpus_per_node,gpus,price_usd,price_per,"
    "pricing_tier,valid_until,fabric_class,fabric_gbps_per_gpu,multi_node,quoted_at,source,"
    "entered_by"
)
GOOD = (
    "lambda,,1-Click Cluster 512x H100,H100 SXM,8,512,0.95,gpu_hour,on_demand,2027-01-31,"
    "infiniband,400,true,2026-11-28,email from Lambda sales 2026-11-28,pat"
)
RESOLD = (
    'nebius,shadeform,"H200 cluster,\nreserved",H200-SXM-141GB,8,1024,30.4,node_hour,'
    "reserved_1y,,infiniband,400,true,2026-11-20,order form 17,pat"
)
EXPIRED = (
    "coreweave,,HGX H100 pool,H100 SXM,8,1024,0.90,gpu_hour,on_demand,2026-12-01,"
    "infiniband,400,true,2026-11-01,call notes 2026-11-01,sam"
)


def csv_file(*rows: str) -> bytes:
    return ("\n".join([HEADER, *rows]) + "\n").encode()


def sha_of(path: Path, table: str) -> str:
    """The content of one of the buyer's tables."""
    _, frame = read_frame(path, f"select * from {table} order by all")
    return hashlib.sha256(frame.to_csv(index=False).encode()).hexdigest()


def sha_of_quotes(path: Path) -> str:
    return sha_of(path, "quotes")


@pytest.fixture
def warehouse(tmp_path: Path, fixture_warehouse: Path) -> Path:
    """A writable copy of the warehouse built from the recordings."""
    path = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, path)
    return path


def test_a_file_keeps_its_good_rows_and_refuses_each_bad_one_with_its_line_and_field():
    data = csv_file(
        GOOD,
        RESOLD,  # a quoted cell over two lines: the next row starts on line 5
        "lambda,,x,H100 SXM,8,,-1,gpu_hour,on_demand,,,,,2026-11-28,email,pat",
        "",
        "lambda,,x,H999,8,,1,gpu_hour,on_demand,,,,,2026-11-28,email,pat",
        "lambda,,x,H100 SXM,8,16,1,gpu_week,on_demand,,,,,2026-11-28,email,pat",
        "lambda,,x,H100 SXM,8,16,1,gpu_hour,on_demand,2026-11-01,,,,2026-11-28,email,pat",
        "lambda,,x,H100 SXM,8",
    )
    entered, refused = quotes.parse(data, "quotes.csv")
    assert [e.quote.configuration for e in entered] == [
        "1-Click Cluster 512x H100",
        "H200 cluster,\nreserved",
    ]
    assert [e.line for e in entered] == [2, 3]
    said = [str(r) for r in refused]
    assert said[0] == "line 5, field price_usd: Input should be greater than 0 (got '-1')"
    assert said[1].startswith("line 7, field gpu_model: unknown GPU 'H999'")
    assert any(s.startswith("line 8, field price_per: ") for s in said)
    assert "line 9: valid_until is before quoted_at" in said  # the whole row's rule
    assert said[-1] == "line 10: 5 cells; the header has 16"
    resold = entered[1].quote
    assert resold.gpu_model == "H200-SXM-141GB" and resold.price_usd_per_gpu_hour == 3.8
    assert resold.committed_months == 12 and resold.sold_by == "shadeform"


def test_json_items_are_numbered_and_the_template_round_trips(tmp_path):
    header = quotes.template_csv().strip().split(",")
    assert tuple(header) == QUOTE_FIELDS
    template = json.loads(quotes.template_json())
    assert list(template[0]) == list(QUOTE_FIELDS)
    good = dict(zip(HEADER.split(","), next(iter([GOOD.split(",")])), strict=True))
    items = [good, {**good, "pricing_tier": "reserved_2y", "term_months": 12}]
    entered, refused = quotes.parse(json.dumps(items).encode(), "quotes.json")
    assert len(entered) == 1 and entered[0].where == "item 1"
    assert [str(r) for r in refused] == [
        "item 2: term_months 12 contradicts pricing_tier reserved_2y (24 months)"
    ]


@pytest.mark.parametrize(
    ("data", "name", "said"),
    [
        (b"", "q.csv", "q.csv: empty"),
        (b"provider,colour\nlambda,red\n", "q.csv", "q.csv line 1: unknown column 'colour'"),
        (b"provider,configuration\nlambda,x\n", "q.csv", "q.csv line 1: no column 'gpu_model'"),
        (b"\xff\xfe\x00", "q.csv", "q.csv: not UTF-8 text"),
        (b'[{"provider": ', "q.json", "q.json line 1: not JSON"),
        (b"[1, 2]", "q.json", "q.json item 1: not an object"),
        (b'[{"provider": "x", "colour": 1}]', "q.json", "q.json item 1: unknown column 'colour'"),
    ],
)
def test_a_file_that_is_no_quotes_file_is_refused_whole(data, name, said):
    with pytest.raises(quotes.QuoteFileError) as caught:
        quotes.parse(data, name)
    assert str(caught.value).startswith(said)


def test_quotes_and_answers_are_stored_once_and_no_refresh_touches_them(warehouse):
    entered, _ = quotes.parse(csv_file(GOOD, RESOLD), "quotes.csv")
    first = quotes.store(warehouse, entered, ENTERED_AT, "quotes.csv")
    assert len(first.stored) == 2 and first.result is not None
    snapshot = current_snapshot(warehouse)
    again = quotes.store(warehouse, entered, ENTERED_AT, "again.csv")
    assert again.stored == () and set(again.already) == set(first.stored)
    assert current_snapshot(warehouse) == snapshot  # nothing new: no snapshot
    replies = (
        "provider,question_id,value,answer,answered_on,answered_by,entered_by\n"
        "lambda,rdma,yes,GPUDirect RDMA on every node,2026-12-01,J. Doe,pat\n"
    )
    replied, _ = rfi.parse(replies.encode(), "replies.csv")
    rfi.store(warehouse, replied, ENTERED_AT, "replies.csv")
    snapshot = current_snapshot(warehouse)
    before = sha_of_quotes(warehouse)
    answers_before = sha_of(warehouse, "rfi_answers")
    publish_synthetic(warehouse, 20)  # a run published as a refresh publishes it
    done = fabricscope(
        "refresh",
        "--offline",
        "--source",
        "lambda_cloud",
        "--warehouse",
        str(warehouse),
        env={"FABRICSCOPE_DATA_DIR": str(warehouse.parent)},
    )
    assert done.returncode == 0, done.stderr
    assert current_snapshot(warehouse).snapshot_id > snapshot.snapshot_id + 1
    assert sha_of_quotes(warehouse) == before
    assert sha_of(warehouse, "rfi_answers") == answers_before
    stored = quotes.stored_quotes(warehouse, date(2026, 12, 4))
    assert list(stored["file_name"]) == ["quotes.csv", "quotes.csv"]
    assert list(stored["line"]) == [2, 3]


def test_a_quote_is_ranked_beside_the_list_offers_with_its_source_and_date(
    warehouse, fixture_warehouse
):
    entered, _ = quotes.parse(csv_file(GOOD, RESOLD, EXPIRED), "quotes.csv")
    stored = quotes.store(warehouse, entered, ENTERED_AT, "quotes.csv")
    ids = dict(zip([e.quote.provider for e in entered], stored.stored, strict=True))
    request = RankRequest(
        workload=preset("llama3-70b"),
        gpu_counts=parse_gpu_counts("512"),
        tiers=(PricingTier.ON_DEMAND,),
    )
    result = rank(warehouse, request, now=NOW)
    offers = result.offers.set_index("offer_key")
    quoted = offers[offers["price_obtained_by"] == "quote"]
    assert list(quoted["quote_id"]) == [ids["lambda"]]  # on demand only; one expired
    row = quoted.iloc[0]
    assert row["rank"] == 1  # 0.95 USD per GPU-hour on InfiniBand beats every list price
    assert row["price_published_by"] == (
        f"Lambda, in a quote to you ({ids['lambda']}: email from Lambda sales 2026-11-28)"
    )
    assert row["fabric_source_grade"] == "provider" and row["fabric_class"] == "infiniband"
    assert pd.Timestamp(row["price_observed_at"]).date() == date(2026, 11, 28)
    assert row["data_age_days"] == 17.0
    assert bool(row["multi_node"])
    # the list offers are all still there: the same as in the warehouse before the quotes
    before = rank(fixture_warehouse, request, now=NOW).offers
    assert sorted(offers.index[offers["price_obtained_by"] != "quote"]) == sorted(
        before["offer_key"]
    )
    reasons = result.excluded.set_index("offer_key")["reason"]
    expired = reasons[reasons.index.str.endswith(ids["coreweave"])]
    assert list(expired) == [
        f"quote {ids['coreweave']} expired on 2026-12-01: ask the provider for a new one"
    ]
    # a reseller's reserved quote, when reserved prices are asked for
    reserved = rank(
        warehouse,
        request.model_copy(update={"tiers": (PricingTier.RESERVED_1Y,)}),
        now=NOW,
    ).offers
    resold = reserved[reserved["price_obtained_by"] == "quote"].iloc[0]
    assert resold["sold_by"] == "shadeform" and resold["provider"] == "nebius"
    assert resold["price_usd_per_gpu_hour"] == pytest.approx(3.8)


def test_the_memo_and_the_files_say_which_price_is_a_quote(warehouse):
    entered, _ = quotes.parse(csv_file(GOOD), "quotes.csv")
    (quote_id,) = quotes.store(warehouse, entered, ENTERED_AT).stored
    request = RankRequest(workload=preset("llama3-70b"), gpu_counts=(512,))
    result = rank(warehouse, request, now=NOW)
    key = result.offers.loc[result.offers["quote_id"] == quote_id, "offer_key"].iloc[0]
    chosen = shortlist.from_result(result, offer_keys=[key])
    memo = shortlist.memo(chosen)
    assert f"is your quote {quote_id} from Lambda, valid until 2027-01-31" in memo
    assert "quoted by Lambda, in a quote to you" in memo
    files = shortlist.csv_frame(chosen)
    assert files.loc[0, "quote_id"] == quote_id
    assert str(pd.Timestamp(files.loc[0, "quote_valid_until"]).date()) == "2027-01-31"


def test_the_cli_adds_imports_and_lists_quotes(warehouse, tmp_path):
    env = {"FABRICSCOPE_WAREHOUSE": str(warehouse), "COLUMNS": "200"}
    template = fabricscope("quote", "template", env=env)
    assert template.returncode == 0 and template.stdout.strip() == ",".join(QUOTE_FIELDS)
    path = tmp_path / "quotes.csv"
    path.write_bytes(
        csv_file(GOOD, "lambda,,x,H100 SXM,8,,-1,gpu_hour,on_demand,,,,,2026-11-28,e,p")
    )
    done = fabricscope("quote", "import", str(path), env=env)
    assert done.returncode == 1  # a row refused; the other stored
    assert "refused: quotes.csv line 3, field price_usd: Input should be greater than 0" in (
        done.stderr
    )
    assert "1 quotes stored, 0 already stored" in done.stdout
    added = fabricscope(
        "quote",
        "add",
        "provider=crusoe",
        "configuration=H200 x 256",
        "gpu_model=H200 SXM",
        "price_usd=2.5",
        "price_per=gpu_hour",
        "pricing_tier=on_demand",
        "quoted_at=2026-12-01",
        "valid_until=2026-12-10",
        "source=call notes",
        "entered_by=pat",
        env=env,
    )
    assert added.returncode == 0, added.stderr
    wrong = fabricscope("quote", "add", "provider=crusoe", "colour=red", env=env)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    bad = fabricscope("quote", "add", "provider=crusoe", "price_usd=x", env=env)
    assert bad.returncode == 2 and "price_usd: Input should be a valid number" in bad.stderr
    listed = fabricscope("quote", "list", "--as-of", "2026-12-15", "-f", "json", env=env)
    rows = {r["provider"]: r for r in json.loads(listed.stdout)}
    assert rows["crusoe"]["expired"] is True and rows["lambda"]["expired"] is False
    assert rows["crusoe"]["quoted_at"] == "2026-12-01"
    fields = fabricscope("quote", "template", "--fields", env=env)
    assert "the day the provider quoted" in fields.stdout


def test_the_docs_list_every_field_as_the_contract_says():
    text = (ROOT / "docs" / "QUOTES.md").read_text(encoding="utf-8")
    for field in quotes.field_help():
        assert f"| `{field['field']}` | {field['required']} | {field['meaning']} |" in text
