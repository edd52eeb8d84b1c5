"""The SQL console's back end: people's SQL, run read-only and fenced in.

Used by ``fabricscope sql`` and by the app's SQL page; both call
:func:`run_user_query`. Settings are defence in depth (see DuckDB's "Securing
DuckDB"): a separate read-only connection, one statement that must be a query,
no file or network access, no extensions, no Python objects visible by name,
memory and thread caps, the configuration locked, a row cap and a timeout.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from warehouse.db import SnapshotInfo, WarehouseError, WarehouseMissingError

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
        raise QueryFailed(f"the query does not parse: {_first_line(exc)}") from exc
    if len(statements) != 1:
        raise QueryRefused(f"one statement at a time, please (got {len(statements)})")
    statement = statements[0]
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


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


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
    """Run one read-only query from a person; raise QueryRefused or QueryFailed."""
    limits = limits or QueryLimits()
    statement = check_statement(sql)
    con = _connect_locked(path, limits)
    timer = threading.Timer(limits.timeout_s, con.interrupt)
    try:
        snapshot = _snapshot_or_none(con)
        timer.start()
        try:
            cursor = con.execute(statement)
            columns = [d[0] for d in cursor.description or []]
            rows = cursor.fetchmany(limits.max_rows + 1)
        except duckdb.InterruptException:
            raise QueryRefused(
                f"the query ran longer than {limits.timeout_s:g} s and was stopped; "
                "narrow it down or add a LIMIT"
            ) from None
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
                raise QueryRefused(f"not allowed in the SQL console: {_first_line(exc)}") from None
            raise QueryFailed(_first_line(exc)) from None
    finally:
        timer.cancel()
        con.close()
    truncated = len(rows) > limits.max_rows
    return QueryResult(columns, rows[: limits.max_rows], truncated, snapshot)
