"""The warehouse's named reads (fabricscope/warehouse/sql/queries/): each runs, each is read
by the code, and the code asks only for names that exist."""

from __future__ import annotations

import ast

import pytest

from fabricscope.evidence import transparency
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import WarehouseError, read_connection
from tests.helpers import ROOT

# the queries that bind parameters (their ? placeholders): an estimates snapshot and a request
STORED = (
    "stored_ranking",
    "stored_ranking_rows",
    "stored_ranking_exclusions",
    "stored_serving_rows",
)


def _asked_for() -> set[str]:
    """Every name the package and the benchmarks pass to ``reads.sql`` as a literal."""
    names: set[str] = set()
    for path in [*(ROOT / "fabricscope").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "sql"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "reads"
            ):
                argument = node.args[0]
                assert isinstance(argument, ast.Constant), f"{path}: a name, not an expression"
                names.add(argument.value)
    return names


def test_every_named_query_is_read_and_every_name_read_exists():
    assert _asked_for() == set(reads.names())


def test_an_unknown_name_is_one_line_error():
    with pytest.raises(WarehouseError, match="no named query 'nope'"):
        reads.sql("nope")


def test_every_named_query_runs_on_a_warehouse_built_from_the_recordings(fixture_warehouse):
    with read_connection(fixture_warehouse) as (con, snapshot):
        request = con.execute(
            "select request_json from estimate_rankings where snapshot_id = ? "
            "and request_json not like '%\"input_tokens\"%' limit 1",
            [snapshot.snapshot_id],
        ).fetchone()
        serving = con.execute(
            "select request_json from estimate_rankings where snapshot_id = ? "
            "and request_json like '%\"input_tokens\"%' limit 1",
            [snapshot.snapshot_id],
        ).fetchone()
        assert request is not None and serving is not None
        for name in reads.names():
            text = reads.sql(name)
            assert text.startswith("-- "), f"{name}: its first line says who reads it"
            asked = serving if name == "stored_serving_rows" else request
            params = [snapshot.snapshot_id, asked[0]] if name in STORED else []
            assert text.count("?") == len(params), name
            frame = con.execute(text, params).df()
            assert len(frame.columns) > 0, name
            if name in STORED or name.startswith(("app_", "rank_", "transparency_")):
                assert len(frame) > 0, f"{name} finds rows in the recordings' warehouse"


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("transparency_facts", transparency.FACT_COLUMNS),
        ("transparency_offers", transparency.PRICE_EVIDENCE_COLUMNS),
        ("transparency_providers", transparency.PROVIDER_COLUMNS),
    ],
)
def test_the_transparency_reads_select_the_columns_its_rules_read(fixture_warehouse, name, columns):
    with read_connection(fixture_warehouse) as (con, _):
        frame = con.execute(reads.sql(name) + " limit 0").df()
    assert tuple(frame.columns) == columns
