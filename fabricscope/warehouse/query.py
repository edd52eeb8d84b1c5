"""The SQL console's back end: people's SQL, run read-only and fenced in.

Used by ``fabricscope sql`` and by the app's SQL page; both call
:func:`run_user_query`. Settings are defence in depth (see DuckDB's "Securing
DuckDB"): one statement that must be a query (EXPLAIN's statement too), no
function that reveals settings or paths or reads files, no file or network access,
no extensions, no Python objects visible by name, the configuration locked. Each
query runs in a worker process of its own (``python -m fabricscope.warehouse.query_worker``) with a
wall-clock kill (string functions that never check for interrupts cannot outrun
it), an address-space limit beside DuckDB's memory limit, a row cap and a cap on
the characters it returns. Its own process also means its connection never meets
the caller's (DuckDB refuses two configurations of one file in one process).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import resource
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from fabricscope.warehouse.db import (
    SnapshotInfo,
    WarehouseError,
    WarehouseMissingError,
    damaged,
    first_line,
    refuse_stray_wal,
)

# Statement types a console accepts; DESCRIBE, SHOW, SUMMARIZE and FROM-first
# queries parse as SELECT.
_ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

_REFUSAL_BY_TYPE: dict[str, str] = {
    "SET": "changing settings (SET/RESET) is not allowed in the SQL console",
    "VARIABLE_SET": "changing settings (SET/RESET) is not allowed in the SQL console",
    "ATTACH": "attaching databases is not allowed in the SQL console",
    "DETACH": "detaching databases is not allowed in the SQL console",
    "LOAD": "installing or loading extensions is not allowed in the SQL console",
    "COPY": "COPY reads or writes files, which the SQL console does not allow",
    "EXPORT": "EXPORT DATABASE writes files, which the SQL console does not allow",
    "PRAGMA": "PRAGMA statements are not allowed in the SQL console",
}


class QueryRefused(WarehouseError):
    """The console would not run this query (or stopped it); the message says why."""


class QueryFailed(WarehouseError):
    """The query was allowed but DuckDB rejected it (a typo, an unknown column)."""


@dataclass(frozen=True)
class QueryLimits:
    max_rows: int = 10_000
    timeout_s: float = 10.0
    memory_limit: str = "1GB"
    threads: int = 2
    # characters a result may return in all (a 20 MB cell would take minutes to print)
    max_output_chars: int = 20_000_000
    max_cell_chars: int = 100_000
    max_column_chars: int = 200


# Functions that reveal the server's settings, paths or environment, or read files
# (the warehouse file itself included): refused by name wherever they appear.
_DENIED_FUNCTIONS = frozenset(
    {
        "current_setting",
        "duckdb_settings",
        "duckdb_databases",
        "duckdb_extensions",
        "duckdb_secrets",
        "duckdb_temporary_files",
        "duckdb_memory",
        "getenv",
        "read_blob",
        "read_text",
        "read_csv",
        "read_csv_auto",
        "read_json",
        "read_json_auto",
        "read_json_objects",
        "read_ndjson",
        "read_parquet",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "glob",
        "sniff_csv",
        "which_secret",
        "pragma_database_list",
        "pragma_database_size",
    }
)
# A worker's address space: DuckDB's memory limit plus the interpreter's own.
_WORKER_OVERHEAD_BYTES = 1 << 30
# A worker gets this long to start and connect, beyond the query's timeout.
_WORKER_START_S = 15.0
# A query DuckDB cannot interrupt (string functions that never check) gets this long after
# its interrupt, then the worker ends itself with _TIMED_OUT_EXIT: the clock, not the query,
# decides when the console answers.
_INTERRUPT_GRACE_S = 1.0
_TIMED_OUT_EXIT = 124


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    snapshot: SnapshotInfo | None

    def to_pandas(self) -> Any:
        import pandas as pd

        return pd.DataFrame.from_records(self.rows, columns=self.columns)


def check_statement(sql: str) -> str:
    """Refuse anything that is not exactly one query; returns the statement's SQL."""
    if not sql.strip():
        raise QueryRefused("the query is empty")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryFailed(f"the query does not parse: {first_line(exc)}") from exc
    if len(statements) != 1:
        raise QueryRefused(f"one statement at a time, please (got {len(statements)})")
    statement = statements[0]
    if statement.type is duckdb.StatementType.EXPLAIN:
        # EXPLAIN [ANALYZE] runs what it wraps: that statement must be a query too
        inner = re.sub(r"^\s*explain(\s+analy[sz]e)?\s+", "", statement.query, flags=re.I)
        wrapped = duckdb.extract_statements(inner)
        if len(wrapped) != 1 or wrapped[0].type is not duckdb.StatementType.SELECT:
            raise QueryRefused("EXPLAIN may wrap a read query only (SELECT, WITH, FROM ...)")
        _check_functions(inner)
    elif statement.type is duckdb.StatementType.SELECT:
        _check_functions(statement.query)
    if statement.type not in _ALLOWED:
        kind = statement.type.name
        raise QueryRefused(
            _REFUSAL_BY_TYPE.get(
                kind,
                "only read queries (SELECT, WITH, DESCRIBE, EXPLAIN) are allowed "
                f"in the SQL console, not {kind}",
            )
        )
    return statement.query


def _function_names(node: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "function_name" and isinstance(value, str):
                names.add(value.lower())
            else:
                names |= _function_names(value)
    elif isinstance(node, list):
        for item in node:
            names |= _function_names(item)
    return names


def _check_functions(sql: str) -> None:
    """Refuse a query that calls a denied function (as parsed, not by text search)."""
    with duckdb.connect() as con:
        tree = json.loads(con.execute("select json_serialize_sql(?)", [sql]).fetchone()[0])
    if tree.get("error"):
        return  # DESCRIBE, SHOW, SUMMARIZE: no function calls of the user's to look at
    denied = sorted(_function_names(tree) & _DENIED_FUNCTIONS)
    if denied:
        raise QueryRefused(
            f"{denied[0]}() is not allowed in the SQL console: it reveals the server's "
            "settings or paths, or reads files; query the warehouse's tables and views"
        )


def _connect_locked(path: Path, limits: QueryLimits) -> duckdb.DuckDBPyConnection:
    if not path.exists():
        raise WarehouseMissingError(
            f"no warehouse at {path}: build it with `fabricscope init` (or `make app`)"
        )
    config: dict[str, Any] = {
        "access_mode": "READ_ONLY",
        "enable_external_access": False,
        "autoload_known_extensions": False,
        "autoinstall_known_extensions": False,
        "allow_community_extensions": False,
        "allow_unsigned_extensions": False,
        # a name in SQL never resolves to a pandas/Arrow object of the Python process
        "python_enable_replacements": False,
        "memory_limit": limits.memory_limit,
        "threads": limits.threads,
        "max_temp_directory_size": "0B",
    }
    refuse_stray_wal(path)
    try:
        con = duckdb.connect(str(path), read_only=True, config=config)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open the warehouse {path} read-only: {exc}") from exc
    con.execute("set TimeZone = 'UTC'")
    con.execute("set lock_configuration = true")  # last: nothing above can be undone by SQL
    return con


def _snapshot_or_none(con: duckdb.DuckDBPyConnection) -> SnapshotInfo | None:
    try:
        row = con.execute(
            "select snapshot_id, published_at, snapshot_hash from snapshots "
            "order by snapshot_id desc limit 1"
        ).fetchone()
    except duckdb.Error:
        return None
    return None if row is None else SnapshotInfo(int(row[0]), row[1], str(row[2]))


def run_user_query(path: Path, sql: str, limits: QueryLimits | None = None) -> QueryResult:
    """Run one read-only query from a person in a worker process; raise QueryRefused or
    QueryFailed (or WarehouseMissingError / WarehouseError)."""
    limits = limits or QueryLimits()
    statement = check_statement(sql)
    request = pickle.dumps((path, statement, limits))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "fabricscope.warehouse.query_worker"],
            input=request,
            capture_output=True,
            timeout=limits.timeout_s + _WORKER_START_S,
            check=False,
        )
    except subprocess.TimeoutExpired:  # the worker is killed: nothing outruns the clock
        raise QueryRefused(
            f"the query's worker did not answer within {limits.timeout_s + _WORKER_START_S:g} s "
            "and was killed (the machine may be very busy); try again or narrow the query"
        ) from None
    if done.returncode == _TIMED_OUT_EXIT:
        raise QueryRefused(_too_long(limits))
    if done.returncode != 0 or not done.stdout:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        raise QueryRefused(
            f"the query's worker stopped (exit {done.returncode}): {tail[0][:200]}; it may "
            f"have needed more than the console's memory limit ({limits.memory_limit})"
        )
    kind, value = pickle.loads(done.stdout)  # our own worker's answer
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    error = {
        "refused": QueryRefused,
        "failed": QueryFailed,
        "missing": WarehouseMissingError,
    }.get(kind, WarehouseError)
    raise error(value)


def _too_long(limits: QueryLimits) -> str:
    return (
        f"the query ran longer than {limits.timeout_s:g} s and was stopped; "
        "narrow it down or add a LIMIT"
    )


def _column_names(names: list[str], limits: QueryLimits) -> list[str]:
    """Column names as a result shows them: a long one (a 1 MB expression names its column
    with itself) cut with a mark, as long cells are, and kept distinct after the cut."""
    shown: list[str] = []
    for name in names:
        if len(name) > limits.max_column_chars:
            name = (
                f"{name[: limits.max_column_chars]}... "
                f"[{len(name) - limits.max_column_chars:,} more characters]"
            )
        unique, number = name, 2
        while unique in shown:
            unique, number = f"{name} ({number})", number + 1
        shown.append(unique)
    return shown


def _capped(rows: list[tuple[Any, ...]], limits: QueryLimits) -> tuple[list[tuple[Any, ...]], bool]:
    """Long text cells cut (with a mark), and the rows that fit the output cap."""
    kept: list[tuple[Any, ...]] = []
    total = 0
    for row in rows:
        cells = []
        for value in row:
            if isinstance(value, str | bytes) and len(value) > limits.max_cell_chars:
                shown = value[: limits.max_cell_chars]
                value = (
                    shown + f"... [{len(value) - limits.max_cell_chars:,} more characters]"
                    if isinstance(shown, str)
                    else shown
                )
            total += len(value) if isinstance(value, str | bytes) else 16
            cells.append(value)
        if total > limits.max_output_chars:
            return kept, True
        kept.append(tuple(cells))
    return kept, False


def _run_here(path: Path, statement: str, limits: QueryLimits) -> QueryResult:
    """The query in this process (the worker): connection fenced in, interrupt on time."""
    con = _connect_locked(path, limits)
    timer = threading.Timer(limits.timeout_s, con.interrupt)
    # the query that does not heed the interrupt: the worker ends, the parent says why
    watchdog = threading.Timer(
        limits.timeout_s + _INTERRUPT_GRACE_S, os._exit, args=(_TIMED_OUT_EXIT,)
    )
    watchdog.daemon = True
    try:
        snapshot = _snapshot_or_none(con)
        timer.start()
        watchdog.start()
        try:
            cursor = con.execute(statement)
            columns = _column_names([d[0] for d in cursor.description or []], limits)
            rows = cursor.fetchmany(limits.max_rows + 1)
        except duckdb.InterruptException:
            raise QueryRefused(_too_long(limits)) from None
        except duckdb.PermissionException:
            raise QueryRefused(
                "the SQL console cannot read or write files, URLs or extensions; "
                "query the warehouse's tables and views instead"
            ) from None
        except duckdb.OutOfMemoryException:
            raise QueryRefused(
                f"the query needed more than the console's memory limit ({limits.memory_limit})"
            ) from None
        except duckdb.Error as exc:
            if "read-only" in str(exc) or "configuration has been locked" in str(exc):
                raise QueryRefused(f"not allowed in the SQL console: {first_line(exc)}") from None
            raise damaged(path, exc) or QueryFailed(first_line(exc)) from None
    finally:
        timer.cancel()
        watchdog.cancel()
        con.close()
    truncated = len(rows) > limits.max_rows
    kept, cut = _capped(rows[: limits.max_rows], limits)
    return QueryResult(columns, kept, truncated or cut, snapshot)


def _memory_bytes(size: str) -> int:
    number, unit = re.fullmatch(r"\s*([\d.]+)\s*([KMGT]i?B|B)\s*", size, re.I).groups()  # type: ignore[union-attr]
    scale = {"B": 0, "K": 1, "M": 2, "G": 3, "T": 4}[unit[0].upper()]
    base = 1024 if "i" in unit.lower() else 1000
    return int(float(number) * base**scale)


def worker() -> int:
    """``python -m fabricscope.warehouse.query_worker``: one pickled (path, statement, limits) in
    on stdin, one pickled (kind, value) out on stdout."""
    path, statement, limits = pickle.loads(sys.stdin.buffer.read())
    cap = _memory_bytes(limits.memory_limit) + _WORKER_OVERHEAD_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        answer: tuple[str, Any] = ("ok", _run_here(path, statement, limits))
    except QueryRefused as exc:
        answer = ("refused", str(exc))
    except QueryFailed as exc:
        answer = ("failed", str(exc))
    except WarehouseMissingError as exc:
        answer = ("missing", str(exc))
    except WarehouseError as exc:
        answer = ("error", str(exc))
    except MemoryError:
        answer = (
            "refused",
            f"the query needed more than the console's memory limit ({limits.memory_limit})",
        )
    sys.stdout.buffer.write(pickle.dumps(answer))
    return 0
