"""The SQL console back end that `fabricscope sql` and the app's SQL page both call."""

from __future__ import annotations

import resource
import threading
import time

import pandas as pd
import pytest

from fabricscope.warehouse.db import current_snapshot, read_frame, verify
from fabricscope.warehouse.query import QueryFailed, QueryLimits, QueryRefused, run_user_query
from tests.helpers import publish_synthetic


@pytest.fixture
def populated(warehouse_path):
    publish_synthetic(warehouse_path, 200, source="alpha")
    return warehouse_path


def test_a_plain_query_returns_rows_and_the_snapshot(populated):
    result = run_user_query(populated, "select count(*) as n from offers_current")
    assert result.columns == ["n"] and result.rows == [(200,)]
    assert result.snapshot == current_snapshot(populated)
    assert not result.truncated


@pytest.mark.parametrize(
    "sql",
    [
        "describe offers_current",
        "show tables",
        "summarize gpus",
        "explain select * from gpus",
        "with x as (select 1 as a) select * from x",
        "from gpus select gpu_model limit 3",
        "select * from gpus;",
    ],
)
def test_read_only_forms_are_allowed(populated, sql):
    assert run_user_query(populated, sql).columns


def test_rows_are_capped(populated):
    result = run_user_query(populated, "select * from offers_history", QueryLimits(max_rows=25))
    assert len(result.rows) == 25 and result.truncated


HOSTILE = {
    "read_csv": "select * from read_csv('/etc/passwd')",
    "read_csv_auto": "select * from read_csv_auto('/etc/hostname')",
    "read_text": "select * from read_text('/etc/hostname')",
    "read_blob": "select * from read_blob('/etc/hostname')",
    "read_parquet": "select * from read_parquet('/tmp/*.parquet')",
    "glob": "select * from glob('/*')",
    "url": "select * from 'https://example.com/prices.csv'",
    "copy to": "copy offers_history to 'stolen.csv'",
    "copy select to": "copy (select * from gpus) to 'stolen.parquet' (format parquet)",
    "export database": "export database 'dump'",
    "attach": "attach 'other.duckdb' as other",
    "detach": "detach warehouse",
    "install": "install httpfs",
    "load": "load httpfs",
    "set external access": "set enable_external_access = true",
    "reset": "reset memory_limit",
    "set memory": "set memory_limit = '100GB'",
    "unlock": "set lock_configuration = false",
    "pragma": "pragma database_list",
    "create": "create table x as select 1",
    "create temp": "create temp table x as select 1",
    "insert": "insert into gpus (gpu_model, vendor, source) values ('X', 'nvidia', 's')",
    "update": "update offers_history set price = 0",
    "delete": "delete from offers_history",
    "drop": "drop view offers_current",
    "checkpoint": "checkpoint",
    "use": "use system",
    "two statements": "select 1; drop table gpus",
    "empty": "   ",
    "secrets": "select * from duckdb_secrets()",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_queries_are_refused_with_a_clear_message_and_no_side_effect(
    populated, tmp_path, monkeypatch, name
):
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    monkeypatch.chdir(workdir)  # any file written would land here
    before = verify(populated)
    with pytest.raises(QueryRefused) as refusal:
        run_user_query(populated, HOSTILE[name])
    message = str(refusal.value)
    assert message and "\n" not in message and "Traceback" not in message
    assert list(workdir.iterdir()) == []
    after = verify(populated)
    assert after.ok and after.snapshot == before.snapshot


def test_names_resolve_only_to_warehouse_relations_never_to_app_objects_or_files(populated):
    app_secret_frame = pd.DataFrame({"token": ["do-not-leak"]})  # noqa: F841 (in scope on purpose)
    with pytest.raises(QueryFailed, match="app_secret_frame does not exist"):
        run_user_query(populated, "select * from app_secret_frame")
    with pytest.raises(QueryFailed, match="/etc/passwd does not exist"):
        run_user_query(populated, "select * from '/etc/passwd'")


def test_a_runaway_query_is_interrupted_within_its_timeout(populated):
    started = time.monotonic()
    with pytest.raises(QueryRefused, match=r"longer than 1 s"):
        run_user_query(
            populated,
            # a streaming aggregate over 10^12 rows: CPU for hours, memory flat, so only the
            # timeout can stop it (a cross join may hit the memory limit first on a fast box)
            "select sum(i % 7) from range(1000000000000::bigint) t(i)",
            QueryLimits(timeout_s=1.0),
        )
    assert time.monotonic() - started < 6.0


def test_a_huge_result_is_streamed_to_the_row_cap_not_materialised(populated):
    result = run_user_query(
        populated, "select * from range(1e10::bigint)", QueryLimits(max_rows=10, timeout_s=5)
    )
    assert result.truncated and len(result.rows) == 10


def test_user_errors_are_reported_as_failures_not_refusals(populated):
    with pytest.raises(QueryFailed, match="no_such_column"):
        run_user_query(populated, "select no_such_column from gpus")
    with pytest.raises(QueryFailed, match="does not parse"):
        run_user_query(populated, "selec 1")


def test_missing_warehouse_is_a_clear_error(tmp_path):
    with pytest.raises(Exception, match="fabricscope init"):
        run_user_query(tmp_path / "nope.duckdb", "select 1")


def test_a_string_function_that_ignores_interrupts_is_killed_on_the_clock(populated):
    # regexp_replace over a 200 MB string never checks for interrupts: only the worker's
    # wall-clock kill stops it (it ran 199 s in the caller's process before)
    # wall-clock end (a second after its interrupt), not the parent's last-resort kill, whose
    # message differs; no timing is asserted, the way it was stopped is
    limits = QueryLimits(timeout_s=1.0, memory_limit="2GB")
    with pytest.raises(QueryRefused, match=r"ran longer than 1 s and was stopped"):
        run_user_query(
            populated,
            "select length(regexp_replace(repeat('ab', 100000000), 'a', 'c', 'g'))",
            limits,
        )


def test_memory_is_capped_in_the_worker_not_the_caller(populated):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(QueryRefused, match="memory"):
        run_user_query(
            populated,
            "select damerau_levenshtein(repeat('a', 40000), repeat('b', 40000))",
            QueryLimits(memory_limit="256MB", timeout_s=60),
        )
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, "the caller's own memory stays where it was"


@pytest.mark.parametrize(
    "sql",
    [
        "explain analyze copy gpus to 'stolen.csv'",
        "explain analyze insert into gpus (gpu_model, vendor, source) values ('X', 'n', 's')",
        "select current_setting('home_directory')",
        "select * from duckdb_databases()",
        "select path from duckdb_databases()",
        "select * from read_blob('warehouse.duckdb')",
        "select upper(x) from (select getenv('HOME') as x)",
    ],
)
def test_wrapped_statements_and_revealing_functions_are_refused(populated, sql):
    with pytest.raises(QueryRefused):
        run_user_query(populated, sql)


def test_explain_analyze_of_a_query_is_allowed(populated):
    assert run_user_query(populated, "explain analyze select count(*) from gpus").rows


def test_console_queries_and_page_reads_in_one_process_never_break_each_other(populated):
    errors: list[BaseException] = []

    def page_reads() -> None:
        for _ in range(10):
            try:
                read_frame(populated, "select count(*) from offers_current")
            except BaseException as exc:
                errors.append(exc)

    def console_queries() -> None:
        for _ in range(5):
            try:
                run_user_query(populated, "select count(*) from offers_current")
            except BaseException as exc:
                errors.append(exc)

    threads = [threading.Thread(target=f) for f in (page_reads, console_queries, console_queries)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_very_long_cells_are_cut_and_said_so(populated):
    result = run_user_query(
        populated,
        "select repeat('x', 300000) as big",
        QueryLimits(max_cell_chars=1000, max_output_chars=10_000),
    )
    [(cell,)] = result.rows
    assert cell.startswith("x" * 1000) and cell.endswith("[299,000 more characters]")


def test_very_long_column_names_are_cut_and_kept_distinct(populated):
    long = "x" * 300_000
    result = run_user_query(populated, f'select 1 as "{long}a", 2 as "{long}b", 3 as short')
    first, second, third = result.columns
    assert len(first) < 300 and first.endswith("[299,801 more characters]")
    assert second == f"{first} (2)" and third == "short"
    assert result.rows == [(1, 2, 3)]
