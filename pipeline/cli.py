"""``fabricscope``: one command line for the warehouse, the model and the app.

Errors a user can fix print one line on stderr and exit non-zero; no tracebacks.
Exit codes: 0 ok, 1 refused or failed (a query, a publish), 2 bad usage or config.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from pipeline.config import ConfigError, Settings, load_settings
from pipeline.refresh import ensure_warehouse
from pipeline.status import freshness_report
from warehouse.db import WarehouseError, verify
from warehouse.export import export_parquet
from warehouse.query import QueryFailed, QueryRefused, run_user_query

app = typer.Typer(
    name="fabricscope",
    help="Compare GPU clouds by time-to-train and cost for your workload, fabric included.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


WarehouseOption = Annotated[
    Path | None,
    typer.Option(
        "--warehouse",
        help="The warehouse file [env FABRICSCOPE_WAREHOUSE; default data/warehouse.duckdb].",
        show_default=False,
    ),
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="How to print results.")]


class UserError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _settings(warehouse: Path | None) -> Settings:
    return load_settings(warehouse=warehouse)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN -> null
        return None
    return value


def print_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: OutputFormat,
    title: str | None = None,
) -> None:
    if fmt is OutputFormat.JSON:
        records = [{c: _jsonable(v) for c, v in zip(columns, row, strict=True)} for row in rows]
        sys.stdout.write(json.dumps(records, indent=2, default=str) + "\n")
    elif fmt is OutputFormat.CSV:
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows([["" if v is None else _jsonable(v) for v in row] for row in rows])
    else:
        table = Table(title=title, show_lines=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*["NULL" if v is None else str(_jsonable(v)) for v in row])
        out.print(table)


@app.command()
def init(warehouse: WarehouseOption = None) -> None:
    """Create or migrate the warehouse and load the reference data."""
    settings = _settings(warehouse)
    settings.require_writable()
    result = ensure_warehouse(settings.warehouse)
    for note in result.notes:
        err.print(note)
    if result.snapshot is not None:
        out.print(
            f"warehouse {settings.warehouse}: snapshot {result.snapshot.snapshot_id} "
            f"({result.snapshot.snapshot_hash[:12]})"
        )


@app.command()
def status(
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
    check: Annotated[
        bool, typer.Option("--verify", help="Recompute every content hash from the rows.")
    ] = False,
) -> None:
    """Show the snapshot and the freshness of every source."""
    settings = _settings(warehouse)
    report = freshness_report(settings.warehouse, settings.stale_after_hours)
    if fmt is OutputFormat.TABLE:
        snap = report.snapshot
        out.print(
            f"snapshot {snap.snapshot_id} published {snap.published_at:%Y-%m-%d %H:%M} UTC "
            f"({snap.snapshot_hash[:12]}); stale after {settings.stale_after_hours:g} h"
        )
        if report.frame.empty:
            out.print("no source has run yet: the warehouse holds reference data only")
    frame = report.frame
    print_rows(
        list(frame.columns), list(frame.itertuples(index=False, name=None)), fmt, title="sources"
    )
    if check:
        verdict = verify(settings.warehouse)
        if not verdict.ok:
            raise UserError(
                "verification failed: "
                + (
                    f"runs {', '.join(verdict.mismatched_runs)} changed; "
                    if verdict.mismatched_runs
                    else ""
                )
                + f"snapshot hash {verdict.recomputed_hash[:12]} != recorded "
                f"{verdict.snapshot.snapshot_hash[:12]}"
            )
        err.print(f"verified: content matches snapshot hash {verdict.recomputed_hash[:12]}")
    if report.stale_sources:
        err.print(f"stale: {', '.join(report.stale_sources)}")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="One read-only SQL query.")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run a read-only SQL query against the warehouse (same limits as the app)."""
    settings = _settings(warehouse)
    try:
        result = run_user_query(settings.warehouse, query, settings.query_limits)
    except QueryRefused as exc:
        raise UserError(f"refused: {exc}") from None
    except QueryFailed as exc:
        raise UserError(f"query failed: {exc}") from None
    print_rows(result.columns, result.rows, fmt)
    if result.truncated:
        err.print(f"showing the first {len(result.rows)} rows (row cap); add a LIMIT or filter")


@app.command()
def export(
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write Parquet files into this folder.")
    ] = None,
    view: Annotated[
        list[str] | None,
        typer.Option("--view", help="Export only this view or table (repeatable)."),
    ] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Export the current snapshot (or some views of it) to Parquet."""
    settings = _settings(warehouse)
    if parquet is None:
        raise UserError("say what to export: --parquet DIR", code=2)
    result = export_parquet(settings.warehouse, parquet, view)
    for relation, rows in sorted(result.files.items()):
        out.print(f"{relation}.parquet: {rows} rows")
    out.print(f"snapshot {result.snapshot.snapshot_id} exported to {result.directory}")


@app.command()
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.")] = 8501,
    warehouse: WarehouseOption = None,
) -> None:
    """Start the Streamlit app on localhost."""
    settings = _settings(warehouse)
    app_file = Path(__file__).resolve().parent.parent / "ui" / "app.py"
    env = {**os.environ, "FABRICSCOPE_WAREHOUSE": str(settings.warehouse.resolve())}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_file),
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]
    out.print(f"fabricscope on http://127.0.0.1:{port} (Ctrl+C to stop)")
    raise typer.Exit(subprocess.call(command, env=env))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; usage errors come from Click (exit 2), ours print one line."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="fabricscope")
    except SystemExit as exc:  # Click ends every standalone run this way
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except UserError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return exc.code
    except ConfigError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return 2
    except WarehouseError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
