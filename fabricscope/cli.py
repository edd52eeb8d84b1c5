"""``fabricscope``: one command line for the warehouse, the model and the app.

Errors a user can fix print one line on stderr and exit non-zero; no tracebacks.
Exit codes: 0 ok, 1 refused or failed (a query, a publish), 2 bad usage or config.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import date, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

# Everything heavier than typer and rich (pandas, numpy, duckdb, the model, the warehouse) is
# imported inside the command that needs it: `fabricscope --help` and `estimate` start in a
# fraction of the time (bench/bench_cli.py measures it).
if TYPE_CHECKING:
    from rich.progress import TaskID

    from fabricscope.config import Settings
    from fabricscope.model import scaling
    from fabricscope.model.workload import Recompute, Workload
    from fabricscope.ops.refresh import SourceOutcome
    from fabricscope.rank import ranking

app = typer.Typer(
    name="fabricscope",
    help="Compare GPU clouds by time-to-train and cost for your workload, fabric included.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Control characters other than newline and tab, shown as \x.. escapes: data (a scraped name,
# a query result) must never drive the terminal (colours, cursor moves, a cleared screen).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _clean(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# A column's name as printed: a header is a name, not data (a 1 MB SQL expression names its
# column with itself); cut with a mark as the console cuts long cells.
MAX_HEADER_CHARS = 200
# An error line's length: a message that quotes the input (a 5,000-digit number) stays a line.
MAX_ERROR_CHARS = 500


def _cut(text: str, limit: int) -> str:
    return (
        text if len(text) <= limit else f"{text[:limit]}... [{len(text) - limit:,} more characters]"
    )


def _header(name: Any) -> str:
    return _clean(_cut(str(name), MAX_HEADER_CHARS))


def _escaped(value: Any) -> Any:
    """A value for csv or json: text with its control characters escaped, others as they are."""
    return _clean(value) if isinstance(value, str) else value


def _finite(param: typer.CallbackParam, value: float | None) -> float | None:
    """A float option's check: inf and nan parse as floats but are no deadline, price or
    weight (an infinite deadline was read as none)."""
    if value is not None and not math.isfinite(value):
        raise UserError(f"{param.opts[0]} must be a finite number (got {value})", code=2)
    return value


class _PlainConsole(Console):
    """A console that prints text as it is: no Rich markup ("[/x]" in data is text, never a
    tag), no emoji codes or highlighting, and control characters escaped."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(markup=False, emoji=False, highlight=False, **kwargs)

    def print(self, *objects: Any, **kwargs: Any) -> None:
        super().print(*(_clean(o) if isinstance(o, str) else o for o in objects), **kwargs)


# piped output is 200 columns wide unless COLUMNS says otherwise, so a file or grep sees whole rows
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
out = _PlainConsole(soft_wrap=True, width=_WIDTH)
err = _PlainConsole(stderr=True, soft_wrap=True)


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


WarehouseOption = Annotated[
    Path | None,
    typer.Option(
        "--warehouse",
        # no square brackets: help text is Rich markup, where they would be read as a tag
        help="The warehouse file (env FABRICSCOPE_WAREHOUSE; default data/warehouse.duckdb).",
        show_default=False,
    ),
]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="How to print results.")]


class UserError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _settings(warehouse: Path | None) -> Settings:
    from fabricscope.config import load_settings

    return load_settings(warehouse=warehouse)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, float) and value != value:  # NaN -> null
        return None
    return value


# What a table shows where a value is unknown (missing in the data, or not a number).
UNKNOWN = "—"
# A cell made of a number's characters only ("9,345,912–9,354,518", "47%", "2.118") or a date
# and time: such a column is right-aligned and never wrapped, so no number is cut in two.
_NUMBER_CELL = re.compile(r"[-+]?[$\d][\d,.%$–-]*|\d{4}-\d\d-\d\d([T ][\d:.]+([+-][\d:]+)?)?")


# A table's columns are COLUMN_GAP apart; a text column keeps TEXT_MIN_WIDTH characters (or its
# widest cell, if narrower) before optional columns are left out to make room.
COLUMN_GAP = 2
TEXT_MIN_WIDTH = 12


def _missing(value: Any) -> bool:
    """None, NaN or NaT (the only values unequal to themselves)."""
    return value is None or (value != value) is True


def _cell(value: Any) -> str:
    return UNKNOWN if _missing(value) else _clean(str(_jsonable(value)))


def _is_number_column(cells: Sequence[str]) -> bool:
    known = [cell for cell in cells if cell != UNKNOWN]
    return bool(known) and all(_NUMBER_CELL.fullmatch(cell) for cell in known)


def print_rows(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: OutputFormat,
    title: str | None = None,
    notes: Sequence[str] = (),
    optional: Sequence[str] = (),
    whole: bool = False,
) -> None:
    """Rows as JSON, CSV or a table. A table only: ``notes`` are lines under it, and the
    ``optional`` columns (in the order to drop them) are left out, and named in a note, while
    the table is wider than the terminal, so that numbers stay whole and text has room;
    ``whole``: while its text does not fit unfolded either (a table made to read a row a
    line)."""
    if fmt is OutputFormat.JSON:
        names = [_header(c) for c in columns]
        records = [
            {c: _escaped(_jsonable(v)) for c, v in zip(names, row, strict=True)} for row in rows
        ]
        sys.stdout.write(json.dumps(records, indent=2, default=str) + "\n")
    elif fmt is OutputFormat.CSV:
        writer = csv.writer(sys.stdout)
        writer.writerow([_header(c) for c in columns])
        writer.writerows(
            [["" if v is None else _escaped(_jsonable(v)) for v in row] for row in rows]
        )
    else:
        cells = [[_cell(v) for v in row] for row in rows]
        _print_table(columns, cells, title, notes, optional, whole)


def _widest(columns: Sequence[str], cells: list[list[str]], index: int) -> int:
    return max([len(_header(columns[index]))] + [len(row[index]) for row in cells])


def _print_table(
    columns: Sequence[str],
    cells: list[list[str]],
    title: str | None,
    notes: Sequence[str],
    optional: Sequence[str],
    whole: bool = False,
) -> None:
    number = [_is_number_column([row[i] for row in cells]) for i in range(len(columns))]

    def least(i: int) -> int:  # a number column's whole width; text folds down to a minimum
        widest = _widest(columns, cells, i)
        return widest if number[i] or whole else min(widest, TEXT_MIN_WIDTH)

    shown = list(range(len(columns)))
    left_out = []
    for name in optional:
        if sum(least(i) + COLUMN_GAP for i in shown) <= out.width:
            break
        shown.remove(columns.index(name))
        left_out.append(name)
    if left_out:
        notes = [
            *notes,
            f"left out at {out.width} columns: {', '.join(left_out)} (shown in a wider "
            "terminal; --format csv has every field)",
        ]
    # cells and titles as Text: data is never read as markup, its control characters escaped
    table = Table(
        title=Text(_clean(title)) if title else None,
        box=box.SIMPLE_HEAD,
        show_edge=False,
        # a blank line between rows when text folds, so each row reads as one
        show_lines=sum(_widest(columns, cells, i) + COLUMN_GAP for i in shown) > out.width,
        padding=(0, COLUMN_GAP - 1, 0, 0),
    )
    for i in shown:
        table.add_column(
            Text(_header(columns[i])),
            justify="right" if number[i] else "left",
            no_wrap=number[i],
            overflow="fold",
        )
    for row in cells:
        table.add_row(*[Text(row[i]) for i in shown])
    out.print(table)
    for note in notes:  # wrapped at word boundaries to the terminal
        out.print(Text(_clean(note)), soft_wrap=False)


@app.command()
def init(warehouse: WarehouseOption = None) -> None:
    """Create or migrate the warehouse and load the reference data."""
    from fabricscope.ops import refresh as refreshing

    settings = _settings(warehouse)
    settings.require_writable()
    result = refreshing.ensure_warehouse(settings.warehouse)
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
    from fabricscope.ops.status import coverage, freshness_report
    from fabricscope.warehouse.db import verify

    settings = _settings(warehouse)
    report = freshness_report(
        settings.warehouse, settings.stale_after_hours, settings.stale_thresholds
    )
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
    if fmt is OutputFormat.TABLE and not report.frame.empty:
        covered = coverage(settings.warehouse)
        figures = covered.figures
        out.print(
            f"coverage: {figures['offers_gpu_identified']} of {figures['offers']} offers have an "
            f"identified GPU ({_share(figures['share_gpu_identified'])}); "
            f"{figures['cluster_offers_with_fabric']} of {figures['cluster_offers']} offers that "
            "could form a cluster (8+ GPUs or stated multi-node) have a fabric class "
            f"({_share(figures['share_cluster_offers_with_fabric'])}); "
            f"{figures['providers_with_offers']} providers with offers"
        )
        gaps = covered.gaps
        if not gaps.empty:
            print_rows(
                list(gaps.columns),
                list(gaps.itertuples(index=False, name=None)),
                fmt,
                title="cluster-capable offers without a fabric class, and why",
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


# a person's query, not a data file: anything longer is refused before it is parsed
MAX_QUERY_BYTES = 1_000_000


@app.command()
def sql(
    query: Annotated[
        str | None,
        typer.Argument(help="One read-only SQL query; '-' reads it from standard input."),
    ] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Read the query from this file.")
    ] = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run a read-only SQL query against the warehouse (same limits as the app).

    A query starting with '--' (a comment) comes from --file or standard input, or after a
    lone '--' that follows every option: fabricscope sql --format csv -- "-- note ...".
    """
    from fabricscope.warehouse.query import QueryFailed, QueryRefused, run_user_query

    settings = _settings(warehouse)
    if (query is None) == (file is None):
        raise UserError("give one query: as an argument, '-' for standard input, or --file", 2)
    if file is not None:
        query = _query_file(file)
    elif query == "-":
        query = sys.stdin.read(MAX_QUERY_BYTES + 1)
        if len(query) > MAX_QUERY_BYTES:
            raise UserError(f"a query is at most {MAX_QUERY_BYTES:,} characters", code=2)
    assert query is not None
    try:
        result = run_user_query(settings.warehouse, query, settings.query_limits)
    except QueryRefused as exc:
        raise UserError(f"refused: {exc}") from None
    except QueryFailed as exc:
        raise UserError(f"query failed: {exc}") from None
    print_rows(result.columns, result.rows, fmt)
    if result.truncated:
        err.print(f"showing the first {len(result.rows)} rows (row cap); add a LIMIT or filter")


def _query_file(file: Path) -> str:
    """A query file's text, read at most one byte past the cap: a device (/dev/zero), a
    folder or a huge file is said to be what it is, never read whole."""
    if not file.exists():
        raise UserError(f"no such file: {file}", code=2)
    if not file.is_file():
        raise UserError(f"{file}: not a regular file (a folder or a device); give a .sql file", 2)
    try:
        with file.open("rb") as handle:
            data = handle.read(MAX_QUERY_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read {file}: {exc.strerror}", code=2) from None
    if len(data) > MAX_QUERY_BYTES:
        raise UserError(f"{file}: a query file is at most {MAX_QUERY_BYTES:,} bytes", 2)
    if b"\0" in data:
        raise UserError(f"{file}: not a text file (it holds NUL bytes); give a .sql file", 2)
    return data.decode("utf-8", errors="replace")


@app.command()
def export(
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write Parquet files into this folder.")
    ] = None,
    view: Annotated[
        list[str] | None,
        typer.Option("--view", help="Export only this view or table (repeatable)."),
    ] = None,
    shortlist: Annotated[
        bool,
        typer.Option(
            "--shortlist",
            help="Write PREFIX.csv, PREFIX.xlsx and PREFIX.md for a workload's best offers.",
        ),
    ] = False,
    workload: Annotated[
        str | None, typer.Option("--workload", "-w", help="--shortlist: a preset or file.")
    ] = None,
    gpus: Annotated[str | None, typer.Option(help="--shortlist: GPU count or range.")] = None,
    top: Annotated[int | None, typer.Option(help="--shortlist: the first K offers.")] = None,
    offer: Annotated[
        list[str] | None,
        typer.Option("--offer", help="--shortlist: an offer key to keep (repeatable)."),
    ] = None,
    tier: Annotated[
        list[str] | None, typer.Option("--tier", help="--shortlist: pricing tier (repeatable).")
    ] = None,
    objective: Annotated[str, typer.Option(help="--shortlist: cost, time or blend.")] = "cost",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="--shortlist: the files' prefix.")
    ] = None,
    serve: Annotated[
        bool,
        typer.Option("--serve", help="--shortlist: the workload is a serving preset or file."),
    ] = False,
    warehouse: WarehouseOption = None,
) -> None:
    """Export the current snapshot (or some views of it) to Parquet, or a shortlist."""
    settings = _settings(warehouse)
    if shortlist:
        _export_shortlist(settings, workload, gpus, top, offer, tier, objective, output, serve)
        return
    if parquet is None:
        raise UserError("say what to export: --parquet DIR or --shortlist", code=2)
    from fabricscope.warehouse.export import export_parquet

    result = export_parquet(settings.warehouse, parquet, view)
    for relation, rows in sorted(result.files.items()):
        out.print(f"{relation}.parquet: {rows} rows")
    out.print(f"snapshot {result.snapshot.snapshot_id} exported to {result.directory}")


def _job(workload: str, serve: bool, serving: dict[str, Any] | None = None) -> Any:
    """The workload to train (a training preset or file) or, with ``serve``, to serve (a
    serving preset or file, with the command line's load, targets and hours on top); a preset
    of the other kind says which flag it needs."""
    from pydantic import ValidationError

    from fabricscope.model.workloads import (
        WorkloadError,
        load_serving_workload,
        load_workload,
        presets,
        serving_presets,
    )

    given = {k: v for k, v in (serving or {}).items() if v is not None}
    if not serve:
        if given:
            flags = ", ".join(
                f"--{SERVING_FLAGS.get(name, name.replace('_', '-'))}" for name in given
            )
            raise UserError(f"{flags}: for a serving workload (--serve)", code=2)
        if workload in serving_presets():
            raise UserError(f"{workload!r} is a serving preset: add --serve", code=2)
        try:
            return load_workload(workload)
        except WorkloadError as exc:
            raise UserError(str(exc), code=2) from None
    if workload in presets():
        raise UserError(
            f"{workload!r} is a training preset; serving presets: "
            f"{', '.join(serving_presets())} (or a serving workload file)",
            code=2,
        )
    try:
        job = load_serving_workload(workload)
        if given:
            base = job.model_dump()
            if {"requests_per_s", "output_tokens_per_s"} & given.keys():
                # a load given on the command line replaces the workload's, in either unit
                base |= {"requests_per_s": None, "output_tokens_per_s": None}
            if "mix" in given:
                # a mix replaces the workload's lengths; its load stays in requests/s
                base |= {"input_tokens": None, "output_tokens": None, "output_tokens_per_s": None}
            job = type(job).model_validate({**base, **given})
        return job
    except WorkloadError as exc:
        raise UserError(str(exc), code=2) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        if not first["loc"]:  # the workload as a whole (its load given twice, its length)
            raise UserError(f"serving workload: {message}", code=2) from None
        field, *inside = (str(part) for part in first["loc"])
        flag = SERVING_FLAGS.get(field, field.replace("_", "-"))
        where = f" ({'.'.join(inside)})" if inside else ""
        raise UserError(f"--{flag}{where}: {message}", code=2) from None


# serving workload fields whose command-line options are named otherwise
SERVING_FLAGS = {"latency_percentile": "percentile", "attention_data_parallel": "attention-dp"}


def _rank_request(
    workload: str,
    gpus: str | None,
    serve: bool = False,
    serving: dict[str, Any] | None = None,
    **fields: Any,
) -> ranking.RankRequest:
    """A ranking request from command-line values; bad input is one line and exit 2."""
    from pydantic import ValidationError

    from fabricscope.model.hardware import HardwareError
    from fabricscope.rank import ranking

    job = _job(workload, serve, serving)
    if gpus is None:
        if not serve:
            raise UserError("--gpus: give a count (64), a list (8,16,64) or a range", code=2)
        gpus = SERVE_GPUS
    try:
        return ranking.RankRequest(
            workload=job, gpu_counts=ranking.parse_gpu_counts(gpus), **fields
        )
    except (ranking.RankingError, HardwareError) as exc:
        raise UserError(str(exc), code=2) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "request"
        raise UserError(f"invalid rank request: {where}: {first['msg']}", code=2) from None


# the GPU counts a serving ranking tries when none are given: each offer keeps the cheapest
# that carries the load
SERVE_GPUS = "1-1024"


def _require_warehouse(settings: Settings) -> None:
    if not settings.warehouse.exists():
        raise UserError(
            f"no warehouse at {settings.warehouse}: build it with `fabricscope init` "
            "(or `make app`)"
        )


def _export_shortlist(
    settings: Settings,
    workload: str | None,
    gpus: str | None,
    top: int | None,
    offers: list[str] | None,
    tiers: list[str] | None,
    objective: str,
    output: Path | None,
    serve: bool = False,
) -> None:
    if not workload or not (gpus or serve) or output is None:
        raise UserError("--shortlist needs --workload, --gpus and --output PREFIX", code=2)
    if (top is None) == (not offers):
        raise UserError("--shortlist needs either --top K or --offer KEY (repeatable)", code=2)
    from fabricscope.procurement import shortlist as shortlisting

    tiers = list(tiers or ["on_demand"])
    request = _rank_request(workload, gpus, serve, tiers=tuple(tiers), objective=objective)
    _require_warehouse(settings)
    try:
        picked = shortlisting.build(settings.warehouse, request, top, offers, settings.as_of)
    except shortlisting.ShortlistError as exc:
        raise UserError(str(exc), code=2) from None
    try:
        written = shortlisting.write(picked, output)
    except OSError as exc:  # each file is whole or absent: nothing half-written stays
        raise UserError(
            f"cannot write the shortlist to {output}: {exc.strerror or exc}; choose a folder "
            "you can write to (--output)"
        ) from None
    for path in written:
        out.print(f"{path}")
    out.print(f"{len(picked.rows)} offers from snapshot {picked.snapshot_id}")


@app.command()
def schedule(
    once: Annotated[
        bool, typer.Option("--once", help="Run every due job once and exit (cron, CI).")
    ] = False,
    offline: Annotated[
        bool | None,
        typer.Option("--offline/--live", help="Every job replays recorded fixtures."),
    ] = None,
    warehouse: WarehouseOption = None,
) -> None:
    """Keep every source fresh: one job per source on its schedule (docs/OPERATIONS.md).

    Exit codes: 0 stopped cleanly (SIGTERM/SIGINT) or all due jobs ok; 1 another scheduler
    is running, or every due job failed; 2 invalid configuration; 3 some due jobs failed.
    """
    from fabricscope.ops import schedule as scheduling

    settings = _settings(warehouse)
    settings.require_writable()
    replay = settings.offline if offline is None else offline
    try:
        code = scheduling.run_once(settings, replay) if once else scheduling.serve(settings, replay)
    except scheduling.ScheduleBusy as exc:
        raise UserError(str(exc), code=1) from None  # refused: another writer runs
    except scheduling.ScheduleError as exc:
        raise UserError(str(exc), code=2) from None
    if code:
        raise typer.Exit(code)


@app.command()
def refresh(
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Only this source (repeatable).")
    ] = None,
    offline: Annotated[
        bool | None,
        typer.Option("--offline/--live", help="Replay recorded responses from fixtures/."),
    ] = None,
    record: Annotated[
        bool, typer.Option("--record", help="Save live responses as fixtures.")
    ] = False,
    if_empty: Annotated[
        bool, typer.Option("--if-empty", help="Do nothing if any source already has data.")
    ] = False,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Crawl sources and publish each one's run; exit 0 if all succeeded, 3 if some did."""
    from fabricscope.ops import refresh as refreshing

    settings = _settings(warehouse)
    settings.require_writable()
    use_replay = settings.offline if offline is None else offline
    if record and use_replay:
        raise UserError("--record needs the network: drop --offline", code=2)
    if if_empty and refreshing.has_good_runs(settings.warehouse):
        err.print(f"{settings.warehouse} already holds data; nothing to do (--if-empty)")
        return
    try:
        outcomes = _refresh_with_progress(settings, source or [], use_replay, record)
    except refreshing.RefreshBusy as exc:
        raise UserError(str(exc), code=1) from None  # refused: nothing was done
    except refreshing.RefreshError as exc:
        raise UserError(str(exc), code=2) from None
    rows = [
        (
            o.source,
            o.status,
            o.offers,
            o.facts,
            sum(o.dropped.values()),
            o.quarantined,
            round(o.seconds, 1),
            o.error,
        )
        for o in sorted(outcomes, key=lambda o: o.source)
    ]
    columns = [
        "source",
        "status",
        "offers",
        "fabric_facts",
        "dropped",
        "quarantined",
        "seconds",
        "error",
    ]
    print_rows(columns, rows, fmt, title="refresh")
    succeeded = sum(o.ok for o in outcomes)
    if succeeded:
        _materialise(settings)
    if succeeded < len(outcomes):
        raise typer.Exit(3 if succeeded else 1)


def _refresh_with_progress(
    settings: Settings, sources: list[str], offline: bool, record: bool
) -> list[SourceOutcome]:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from fabricscope.ops import refresh as refreshing

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=err,
        transient=False,
        disable=not err.is_terminal,
    ) as progress:
        tasks: dict[str, TaskID] = {}

        def show(outcome: SourceOutcome) -> None:
            if outcome.source not in tasks:
                tasks[outcome.source] = progress.add_task(f"{outcome.source}: crawling", total=1)
            if outcome.status == "running":
                return
            detail = f"{outcome.offers} offers, {outcome.facts} facts"
            progress.update(
                tasks[outcome.source],
                completed=1,
                description=f"{outcome.source}: {outcome.status} ({detail})",
            )

        return refreshing.refresh(
            settings.warehouse,
            settings.data_dir,
            sources,
            offline=offline,
            record=record,
            on_event=show,
            timeout_s=settings.schedule.crawl_timeout_s,  # the same hard wall-clock
        )


@app.command()
def parse(
    source: Annotated[str, typer.Argument(help="The source (spider) name.")],
    file: Annotated[Path, typer.Argument(help="A saved response: HTML, JSON or CSV.")],
    url: Annotated[str | None, typer.Option(help="The URL the file was saved from.")] = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run a source's spider and pipelines on one saved response; publishes nothing.

    The spider sends its own request (a POST with its body, a curated source's file://
    URL) and FILE answers it; a relative FILE is read from the working directory.
    """
    from fabricscope.ops import refresh as refreshing

    file = file.resolve()
    if not file.is_file():
        raise UserError(f"no such file: {file}", code=2)
    try:
        parsed = refreshing.parse_saved(source, file, url)
    except refreshing.RefreshError as exc:
        raise UserError(str(exc), code=2) from None
    if fmt is OutputFormat.JSON:
        sys.stdout.write(json.dumps(parsed, indent=2) + "\n")
    else:
        offer_columns = [
            "instance_type",
            "region",
            "gpu_name",
            "gpu_model",
            "gpu_count",
            "pricing_tier",
            "price",
            "currency",
            "price_usd_per_gpu_hour",
        ]
        print_rows(
            offer_columns,
            [[o.get(c) for c in offer_columns] for o in parsed["offers"]],
            fmt,
            title=f"{source}: offers",
        )
        fact_columns = [
            "instance_type",
            "fabric_class",
            "fabric_gbps_per_node",
            "rdma",
            "multi_node",
            "evidence",
        ]
        if parsed["fabric_facts"] or fmt is OutputFormat.TABLE:
            print_rows(
                fact_columns,
                [[f.get(c) for c in fact_columns] for f in parsed["fabric_facts"]],
                fmt,
                title=f"{source}: fabric facts",
            )
    summary = (
        f"{source}: {parsed['status']}; {len(parsed['offers'])} offers, "
        f"{len(parsed['fabric_facts'])} fabric facts, dropped {parsed['dropped'] or 'none'}"
    )
    if parsed.get("error"):
        summary += f"; {parsed['error']}"
    err.print(summary)
    if parsed["status"] != "ok":
        raise typer.Exit(1)


@app.command()
def estimate(
    workload: Annotated[
        str, typer.Option("--workload", "-w", help="A preset name or a workload JSON file.")
    ],
    hardware: Annotated[
        Path, typer.Option("--hardware", help="JSON: one hardware profile or a list of them.")
    ],
    layout: Annotated[
        str | None,
        typer.Option(help="Fix the layout, e.g. tp=8,pp=4,dp=16,mb=1[,recompute=full][,cp=2]."),
    ] = None,
    usd_per_gpu_hour: Annotated[
        float | None,
        typer.Option(
            "--usd-per-gpu-hour",
            help="Your price per GPU-hour: the cost of the run (the GPU-hours of whole nodes "
            "times it).",
            show_default=False,
            callback=_finite,
        ),
    ] = None,
    serve: ServeOption = False,
    requests_per_s: RequestsOption = None,
    output_tokens_per_s: TokensOption = None,
    ttft_ms: TtftOption = None,
    tpot_ms: TpotOption = None,
    percentile: PercentileOption = None,
    disaggregated: DisaggregatedOption = None,
    attention_dp: AttentionDpOption = None,
    mix: MixOption = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Estimate step time, time-to-train and where the time goes, per hardware profile; with
    --serve, a served model's throughput, latency, replicas and cost per million tokens.

    A profile with a "provider" uses that provider's stored calibration (fabricscope
    calibrate) instead of its fabric class's default, where one exists.
    """
    serving = {
        "requests_per_s": requests_per_s,
        "output_tokens_per_s": output_tokens_per_s,
        "ttft_ms": ttft_ms,
        "tpot_ms": tpot_ms,
        **_serving_options(percentile, disaggregated, attention_dp, mix),
    }
    if serve or any(v is not None for v in serving.values()):
        _estimate_serving(_job(workload, serve, serving), hardware, layout, usd_per_gpu_hour, fmt)
        return
    from fabricscope.model import scaling
    from fabricscope.model.hardware import HardwareError
    from fabricscope.model.workloads import WorkloadError
    from fabricscope.rank import catalog

    # an invalid setting stops every command (README), estimate included; the settings are
    # cheap to read (no duckdb or pandas), the warehouse is opened only for a provider's
    # stored calibration
    settings = _settings(warehouse)
    job = _job(workload, serve=False)
    try:
        given = _hardware_rows(hardware)
        rows = catalog.with_calibrations(given, _stored_calibrations(given, settings))
        profiles = catalog.build(rows)
        grid = _layout(layout, job, rows) if layout else None
    except (WorkloadError, HardwareError) as exc:
        raise UserError(str(exc), code=2) from None
    if usd_per_gpu_hour is not None and not 0 < usd_per_gpu_hour < 1e6:
        raise UserError(
            f"--usd-per-gpu-hour must be a price above 0 (got {usd_per_gpu_hour:g})", code=2
        )
    result = scaling.estimate(job, profiles, grid)
    records = [{**rows[i], **result.row(i)} for i in range(len(rows))]
    if usd_per_gpu_hour is not None:
        for record in records:
            record["usd_per_gpu_hour"] = usd_per_gpu_hour
            record["cost_usd"] = record["gpu_hours"] * usd_per_gpu_hour
    _with_error_bands(records, job)
    if fmt is OutputFormat.JSON:
        sys.stdout.write(json.dumps(records, indent=2, default=_jsonable) + "\n")
        return
    if fmt is OutputFormat.TABLE:
        table, note = ESTIMATE_TABLE, ESTIMATE_NOTE
        if usd_per_gpu_hour is not None:
            table = {**ESTIMATE_TABLE, "cost (USD)": lambda r: _usd(r["cost_usd"])}
            note = f"days: time to train; cost: GPU-hours x ${usd_per_gpu_hour:,.2f} per GPU-hour"
        from fabricscope.model.error_bands import precision_notes, routing_notes

        gpus = [record.get("gpu_model") for record in records]
        notes = [note, *precision_notes(job, gpus), *routing_notes(job), *_band_notes(records)]
        _print_records(table, records, job.name, notes, ESTIMATE_OPTIONAL)
        return
    columns = [
        "gpu_model",
        "gpu_count",
        "fabric_class",
        "fabric_source",
        "layout",
        "step_time_s",
        "mfu",
        "time_to_train_h",
        "gpu_hours",
        "comm_fraction_exposed",
        "verdict",
        "comm_link",
        "fits_memory",
        "memory_gb_per_gpu",
        *(["cost_usd"] if usd_per_gpu_hour is not None else []),
        *ESTIMATE_BAND_COLUMNS,
        *(["cost_usd_band_low", "cost_usd_band_high"] if usd_per_gpu_hour is not None else []),
    ]
    print_rows(
        columns, [[_rounded(r.get(c)) for c in columns] for r in records], fmt, title=job.name
    )


# an estimate's error band (fabricscope/model/error_bands.py) in csv
ESTIMATE_BAND_COLUMNS = [
    "error_band_pct",
    "error_bias_pct",
    "error_band_runs",
    "error_band_cell",
    "time_to_train_h_band_low",
    "time_to_train_h_band_high",
]


def _with_error_bands(records: list[dict[str, Any]], job: Workload) -> None:
    """Each estimate with the training model's held-out error for its GPU and the job, and
    its time (and cost, where priced) at the band's ends; a GPU of no known generation gets
    every held-out run's band, said so."""
    from fabricscope.model.error_bands import band_for, ranges

    def spans(percent: float, record: dict[str, Any]) -> dict[str, Any]:
        time, cost = record["time_to_train_h"], record.get("cost_usd")
        priced = math.nan if cost is None else cost
        return ranges(percent, time, time, priced, priced)

    _attach_bands(
        records,
        lambda gpu: band_for(gpu, job),
        spans,
        lambda name, record: record.get("cost_usd") is not None or name.startswith("time"),
    )


def _attach_bands(
    records: list[dict[str, Any]],
    band_of: Callable[[Any], Any],
    spans: Callable[[float, dict[str, Any]], dict[str, Any]],
    keep: Callable[[str, dict[str, Any]], bool],
) -> None:
    """Each record with its GPU's band (``band_of``, one look-up per GPU model) and the
    ``spans`` at the band's ends it ``keep``s (the priced ones only where it is priced)."""
    bands = {gpu: band_of(gpu) for gpu in {record.get("gpu_model") for record in records}}
    for record in records:
        band = bands[record.get("gpu_model")]
        if band is None:
            continue
        ends = spans(band.percent, record)
        record |= band.fields()
        record |= {
            name: None if math.isnan(value) else float(value)  # no end past a 100% band
            for name, value in ends.items()
            if keep(name, record)
        }


def _estimate_serving(
    job: Any, hardware: Path, layout: str | None, usd_per_gpu_hour: float | None, fmt: Any
) -> None:
    """estimate --serve: the serving model on each hardware profile."""
    from fabricscope.model.hardware import HardwareError
    from fabricscope.model.serving import estimate_serving
    from fabricscope.rank import catalog
    from fabricscope.rank.estimators import (
        serving_capacity,
        serving_layout,
        serving_verdict,
        usd_per_million_tokens,
    )

    if usd_per_gpu_hour is not None and not 0 < usd_per_gpu_hour < 1e6:
        raise UserError(
            f"--usd-per-gpu-hour must be a price above 0 (got {usd_per_gpu_hour:g})", code=2
        )
    fixed = _serving_layout(layout) if layout else None
    try:
        rows = catalog.with_calibrations(_hardware_rows(hardware), {})
        result = estimate_serving(job, catalog.build(rows), layout=fixed)
    except HardwareError as exc:
        raise UserError(str(exc), code=2) from None
    records = []
    for i, row in enumerate(rows):
        found = result.row(i)
        record = {**row, **found, "layout": serving_layout(found, job)}
        record["verdict"] = serving_verdict(found)
        if found["fits"]:
            # the GPUs serving: the load's replicas, or every replica that fits the profile
            gpus = (
                found["gpus_needed"]
                if job.requests_per_s
                else found["replicas"] * found["replica_gpus"]
            )
            record["gpus_serving"] = gpus
            record["capacity_requests_per_s"] = serving_capacity(job, found, row["gpu_count"])
            if usd_per_gpu_hour is not None:
                record["usd_per_gpu_hour"] = usd_per_gpu_hour
                record |= usd_per_million_tokens(
                    job, found, gpus * usd_per_gpu_hour, serving_capacity(job, found, gpus)
                )
        records.append(record)
    _with_serving_bands(records, job)
    if fmt is OutputFormat.JSON:
        sys.stdout.write(json.dumps(records, indent=2, default=_jsonable) + "\n")
        return
    if fmt is OutputFormat.TABLE:
        table = dict(SERVE_ESTIMATE_TABLE)
        if usd_per_gpu_hour is not None:
            table["USD/M out"] = lambda r: _per_million(r.get("usd_per_million_output_tokens"))
            table["USD/M in"] = lambda r: _per_million(r.get("usd_per_million_input_tokens"))
        note = _serve_note(job, ranked=False)
        if usd_per_gpu_hour is None:
            note += "; --usd-per-gpu-hour prices each million tokens"
        profiles = [{"profile": i, **record} for i, record in enumerate(records, 1)]
        notes = [
            note,
            *_serve_estimate_notes(profiles),
            *_serving_band_caveat(records),
            *_band_notes(records, serving=True),
        ]
        _print_records(table, profiles, job.name, notes, SERVE_ESTIMATE_OPTIONAL, whole=True)
        return
    columns = [
        "gpu_model",
        "gpu_count",
        "fabric_class",
        "fits",
        "layout",
        "tp",
        "pp",
        "batch",
        "tokens_per_s_per_gpu",
        "tokens_per_s_per_replica",
        "tpot_ms",
        "ttft_ms",
        "replica_gpus",
        "replicas",
        "capacity_requests_per_s",
        "gpus_needed",
        "memory_gb_per_gpu",
        "prefill_share",
        "fabric_share",
        "multi_node",
        "verdict",
        *(
            ["usd_per_million_output_tokens", "usd_per_million_input_tokens"]
            if usd_per_gpu_hour is not None
            else []
        ),
        *SERVE_ESTIMATE_BAND_COLUMNS,
        *(
            ["usd_per_million_output_tokens_band_low", "usd_per_million_output_tokens_band_high"]
            if usd_per_gpu_hour is not None
            else []
        ),
    ]
    print_rows(
        columns, [[_rounded(r.get(c)) for c in columns] for r in records], fmt, title=job.name
    )


# a served model's error band (fabricscope/model/error_bands.py, SERVING) in csv: of its
# output tokens/s per GPU at the latency target
SERVE_ESTIMATE_BAND_COLUMNS = [
    "error_band_pct",
    "error_bias_pct",
    "error_band_runs",
    "error_band_cell",
    "tokens_per_s_per_gpu_band_low",
    "tokens_per_s_per_gpu_band_high",
]


def _with_serving_bands(records: list[dict[str, Any]], job: Any) -> None:
    """Each serving estimate with the serving model's held-out error for its GPU and the
    model, and its tokens/s per GPU (and USD per million output tokens, where priced) at the
    band's ends."""
    from fabricscope.model.error_bands import serving_band_for, serving_ranges

    def spans(percent: float, record: dict[str, Any]) -> dict[str, Any]:
        tokens, usd = (
            record.get("tokens_per_s_per_gpu"),
            record.get("usd_per_million_output_tokens"),
        )
        return serving_ranges(percent, tokens, tokens, math.nan if _missing(usd) else usd)

    _attach_bands(
        records,
        lambda gpu: serving_band_for(gpu, job),
        spans,
        lambda name, record: "usd_per_gpu_hour" in record or name.startswith("tokens"),
    )


def _serving_band_caveat(records: Sequence[dict[str, Any]]) -> list[str]:
    """Where a shown replica spans nodes: that no held-out serving run crossed a fabric."""
    from fabricscope.model.error_bands import SERVING_FABRIC_CAVEAT

    spans = any(_spans_nodes(r) for r in records if r.get("error_band_pct") is not None)
    return [f"{BAND_HEADER}: {SERVING_FABRIC_CAVEAT}"] if spans else []


def _serving_layout(text: str) -> tuple[int, int]:
    """--layout for a served model: tp=N[,pp=M]."""
    parts: dict[str, int] = {}
    for item in text.split(","):
        key, _, value = item.partition("=")
        key = key.strip().lower()
        if key not in ("tp", "pp") or not value.strip().isdigit() or int(value) < 1:
            raise UserError(f"--layout {text!r}: for --serve give tp=N[,pp=M]", code=2)
        parts[key] = int(value)
    if "tp" not in parts:
        raise UserError(f"--layout {text!r}: for --serve give tp=N[,pp=M]", code=2)
    return parts["tp"], parts.get("pp", 1)


def _stored_calibrations(
    rows: Sequence[dict[str, Any]], settings: Settings
) -> dict[tuple[str, str], dict[str, Any]]:
    """The stored calibrations, read only when a profile names a provider: without one,
    `estimate` needs no warehouse (nor pandas and duckdb)."""
    if not any(row.get("provider") for row in rows):
        return {}
    from fabricscope.evidence import calibrate as calibrating

    return calibrating.stored_all_reduce(settings.warehouse)


def _materialise(settings: Settings) -> None:
    """Rank the preset workloads over the new offers (the estimates table); a failure
    here is reported and leaves the refreshed offers published."""
    from fabricscope.model.hardware import HardwareError
    from fabricscope.rank import materialised
    from fabricscope.warehouse.db import WarehouseError

    try:
        count, info = materialised.materialise(settings.warehouse, lock_wait_s=30.0)
    except (WarehouseError, HardwareError, ValueError) as exc:
        err.print(f"estimates not materialised: {exc}")
        return
    if info is not None:
        err.print(f"estimates: {count} ranked offers in snapshot {info.snapshot_id}")


# How many offers a table shows unless --top says otherwise; JSON and CSV keep every row.
TABLE_TOP = 20


def _number(value: float | None, digits: int) -> str | None:
    return None if _missing(value) else f"{value:,.{digits}f}"


def _span(high: float | None, low: float | None, digits: int) -> str | None:
    """One number, or 'low–high' where an unknown fabric leaves a range."""
    high_text, low_text = _number(high, digits), _number(low, digits)
    if high_text is None or low_text is None or low_text == high_text:
        return high_text
    return f"{low_text}–{high_text}"


def _usd(high: float | None, low: float | None = None) -> str | None:
    """Whole dollars from $100 up (a training run's cost), cents below."""
    digits = 2 if high is None or _missing(high) or abs(high) < 100 else 0
    return _span(high, high if low is None else low, digits)


def _days(hours: float | None, low_hours: float | None = None) -> str | None:
    """Hours as days at one decimal, as the app asks for deadlines and shows time to train."""
    low = hours if low_hours is None else low_hours
    return _span(None if hours is None else hours / 24, None if low is None else low / 24, 1)


def _percent(share: float | None) -> str | None:
    return None if _missing(share) else f"{share:.0%}"


def _yes_no(value: Any) -> str | None:
    return None if _missing(value) else ("yes" if value else "no")


def _region(row: dict[str, Any]) -> str | None:
    more = (row.get("region_count") or 0) - 1
    return row["region"] if more <= 0 or row["region"] is None else f"{row['region']} +{more}"


def _seller(row: dict[str, Any]) -> str:
    """The provider, or 'sold by X, runs on Y' where a reseller sells the provider's machine."""
    sold_by = row.get("sold_by")
    if _missing(sold_by) or sold_by == row["provider"]:
        return str(row["provider"])
    return f"sold by {sold_by}, runs on {row['provider']}"


# A ranked offer as a person reads it, header -> value: the costs in USD, times in days, shares
# in percent; JSON and CSV carry the raw fields (hours, fractions) at full precision. The offer
# is its label (GPUs per instance, GPU, fabric as stated); its raw id is in csv and json.
ServeOption = Annotated[
    bool,
    typer.Option("--serve", help="The workload is served (a serving preset or file), not trained."),
]
RequestsOption = Annotated[
    float | None,
    typer.Option(
        "--requests-per-s",
        help="--serve: the load in requests per second (default: the workload's).",
        callback=_finite,
        show_default=False,
    ),
]
TokensOption = Annotated[
    float | None,
    typer.Option(
        "--output-tokens-per-s",
        help="--serve: the load in output tokens per second instead of requests.",
        callback=_finite,
        show_default=False,
    ),
]
TtftOption = Annotated[
    float | None,
    typer.Option(
        "--ttft-ms",
        help="--serve: the time-to-first-token target in ms.",
        callback=_finite,
        show_default=False,
    ),
]
TpotOption = Annotated[
    float | None,
    typer.Option(
        "--tpot-ms",
        help="--serve: the time-per-output-token target in ms.",
        callback=_finite,
        show_default=False,
    ),
]
HoursOption = Annotated[
    float | None,
    typer.Option(
        "--hours",
        help="--serve: how long the service runs, for its cost (default 730, a month).",
        callback=_finite,
        show_default=False,
    ),
]
PercentileOption = Annotated[
    str | None,
    typer.Option(
        "--percentile",
        help="--serve: the share of requests the latency targets hold for: p99 (the default, "
        "as MLPerf's bounds), p50 or mean.",
        show_default=False,
    ),
]
DisaggregatedOption = Annotated[
    bool | None,
    typer.Option(
        "--disaggregated/--collocated",
        help="--serve: prefill and decode on separate GPUs, the KV cache handed over (default: "
        "the workload's, else collocated).",
        show_default=False,
    ),
]
AttentionDpOption = Annotated[
    bool | None,
    typer.Option(
        "--attention-dp/--no-attention-dp",
        help="--serve: a MoE replica's GPUs split only the routed experts, each running "
        "attention for its own sequences; experts may then spread over nodes.",
        show_default=False,
    ),
]
MixOption = Annotated[
    str | None,
    typer.Option(
        "--mix",
        help="--serve: requests of several lengths, as prompt/output:share pairs, e.g. "
        "'500/100:0.75,8000/1000:0.25' (the shares sum to 1).",
        show_default=False,
    ),
]


def _mix(text: str) -> list[dict[str, Any]]:
    """'500/100:0.75,8000/1000:0.25' as the mix's kinds; a malformed one is refused."""
    from fabricscope.model.serving import parse_mix

    try:
        return parse_mix(text)
    except ValueError as exc:
        raise UserError(f"--mix: {exc}", code=2) from None


def _serving_options(
    percentile: str | None,
    disaggregated: bool | None,
    attention_dp: bool | None,
    mix: str | None,
) -> dict[str, Any]:
    """The serving workload fields the shared options set (None: the workload's own)."""
    return {
        "latency_percentile": percentile,
        "disaggregated": disaggregated,
        "attention_data_parallel": attention_dp,
        "mix": _mix(mix) if mix is not None else None,
    }


def _per_million(value: float | None) -> str | None:
    """USD per million tokens: cents from $1 up, tenths of a cent below (a cheap token's
    price would read 0.00 in cents)."""
    return _number(value, 2 if value is None or _missing(value) or abs(value) >= 1 else 3)


def _ms(value: float | None, low: float | None = None) -> str | None:
    """Milliseconds: whole from 10 ms up, one decimal below."""
    digits = 1 if value is None or _missing(value) or abs(value) < 10 else 0
    return _span(value, value if low is None else low, digits)


def _tokens(value: float | None, other_end: float | None) -> str | None:
    """Output tokens/s per GPU, whole; a range, the worse end (fewer) first, where the fabric
    is unknown."""
    ends = [v for v in (value, other_end) if not _missing(v)]
    return _span(max(ends), min(ends), 0) if ends else None


def _serve_note(job: Any, ranked: bool = True) -> str:
    from fabricscope.rank.estimators import serving_note

    return serving_note(job, ranked)


# the training model's error held out beside its time and cost (fabricscope/model/
# error_bands.py); a note under the table says which runs each band comes from
BAND_HEADER = "± (held out)"


def _band(row: dict[str, Any]) -> str | None:
    """'±24%': the band of a ranked row or an estimate, None where it has none."""
    from fabricscope.model.error_bands import plus_minus

    percent = row.get("error_band_pct")
    return None if _missing(percent) else plus_minus(percent)


# a ranked offer's first columns, in every table of ranked offers
OFFER_HEAD: dict[str, Callable[[dict[str, Any]], Any]] = {
    "#": lambda r: r["rank"],
    "provider": _seller,
    "offer": lambda r: r["offer_label"],
    "per node": lambda r: r["gpus_per_node"],
    "GPUs": lambda r: r["gpus"],
}
RANK_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    **OFFER_HEAD,
    "region": _region,
    "days": lambda r: _days(r["time_to_train_h"], r["time_to_train_h_low"]),
    "cost (USD)": lambda r: _usd(r["total_cost_usd"], r["total_cost_usd_low"]),
    BAND_HEADER: _band,
    "not priced": lambda r: r.get("costs_unknown"),
    "USD/GPU-h": lambda r: _number(r["price_usd_per_gpu_hour"], 3),
    "MFU": lambda r: _percent(r["mfu"]),
    # days since the source observed the price: replayed recordings are old by design
    "price age (d)": lambda r: _number(r["data_age_days"], 0),
    "verdict": lambda r: r["verdict"],
    "fabric (as estimated)": lambda r: r["fabric_estimated_as"],
    "Pareto": lambda r: _yes_no(r["pareto"]),
}


def _gpu_name(gpu_model: str | None) -> str | None:
    from fabricscope.rank.ranking import gpu_name

    return gpu_name(gpu_model)


def _seller_short(row: dict[str, Any]) -> str:
    """The provider, or 'Y via X' where a reseller X sells the provider Y's machine."""
    sold_by = row.get("sold_by")
    if _missing(sold_by) or sold_by == row["provider"]:
        return str(row["provider"])
    return f"{row['provider']} via {sold_by}"


def _layout_short(layout: str | None) -> str | None:
    """'TP2 x PP1, batch 256' as 'TP2xPP1 b256' ('DEP16 x PP2, batch 64, prefill apart' as
    'DEP16xPP2 b64 +P'): the serving table's legend reads it."""
    if _missing(layout) or not layout:
        return None
    return (
        str(layout).replace(" x ", "x").replace(", batch ", " b").replace(", prefill apart", " +P")
    )


def _spans_nodes(row: dict[str, Any]) -> bool:
    from fabricscope.rank.estimators import spans_nodes

    return spans_nodes(row.get("verdict"))


def _fabric_short(row: dict[str, Any], what_if: bool = False) -> str | None:
    """'1 node' where a replica fits one node, else the fabric's share (the worse end's);
    ``what_if``: with the what-if fabric (a what-if row's ``verdict_what_if``)."""
    from fabricscope.rank.estimators import spans_nodes

    end = "_what_if" if what_if else ""
    verdict = row.get(f"verdict{end}")
    if _missing(verdict):
        return None
    return _percent(row[f"fabric_share{end}"]) if spans_nodes(verdict) else "1 node"


# a served model's ranked offer (rank --serve): a row a line at 200 columns. Text that runs
# long is shortened and read in the notes under the table (``_serve_notes``): the offer as
# its GPU and GPUs per node (its label and id in csv and json), a reseller as "via", the
# verdict and the fabric as "1 node" or the fabric's share, each multi-node offer's verdict
# and fabric in full below. SERVE_OFFER_HEAD: its first columns, its what-if's too
SERVE_OFFER_HEAD: dict[str, Callable[[dict[str, Any]], Any]] = {
    "#": lambda r: r["rank"],
    "provider": _seller_short,
    "GPU": lambda r: _gpu_name(r["gpu_model"]),
    "per node": lambda r: r["gpus_per_node"],
    "GPUs": lambda r: r["gpus"],
}
SERVE_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    **SERVE_OFFER_HEAD,
    "region": _region,
    "USD/M out": lambda r: _per_million(r["usd_per_million_output_tokens"]),
    "USD/M in": lambda r: _per_million(r["usd_per_million_input_tokens"]),
    # output tokens/s per GPU at the worse fabric end to the better (the app's column)
    "tok/s/GPU": lambda r: _tokens(r["tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu_low"]),
    BAND_HEADER: _band,
    "TPOT (ms)": lambda r: _ms(r["tpot_ms"], r["tpot_ms_low"]),
    "TTFT (ms)": lambda r: _ms(r["ttft_ms"]),
    "req/s": lambda r: _number(r["capacity_requests_per_s"], 1),
    "layout": lambda r: _layout_short(r["layout"]),
    "cost (USD)": lambda r: _usd(r["total_cost_usd"], r["total_cost_usd_low"]),
    "not priced": lambda r: r.get("costs_unknown"),
    "USD/GPU-h": lambda r: _number(r["price_usd_per_gpu_hour"], 3),
    "fabric": _fabric_short,
    "Pareto": lambda r: _yes_no(r["pareto"]),
}
SERVE_OPTIONAL = [
    "Pareto",
    "not priced",
    "region",
    "per node",
    "layout",
    "TTFT (ms)",
    "USD/M in",
]
# what the serving tables' short columns say (rank --serve, its what-if, estimate --serve)
OFFER_LEGEND = (
    "GPU: the offer's GPU (its label and id: --format csv or json); provider 'X via Y': sold by Y"
)
TOKENS_LEGEND = "tok/s/GPU: output tokens per second per GPU"
LAYOUT_LEGEND = "layout: TP x PP of a replica, b its batch, +P prefill on GPUs apart"
FABRIC_SHORT_LEGEND = (
    "'1 node' where a replica fits one node (the fabric does not matter), else the fabric's "
    "share of a decode step (of the time to first token where the KV cache crosses it)"
)
SERVE_LEGEND = (
    f"{OFFER_LEGEND}; {TOKENS_LEGEND}; {LAYOUT_LEGEND}; fabric: {FABRIC_SHORT_LEGEND} at the "
    "worse end, each such offer's verdict below"
)


def _said_of(
    rows: Sequence[dict[str, Any]], says: Callable[[dict[str, Any]], str | None], number: str
) -> list[str]:
    """Lines under a table that say in full what its short cells do not ('#3, #7: ...'):
    what ``says`` of each row it says anything of, rows alike sharing a line, each row by its
    ``number`` field."""
    said: dict[str, list[str]] = {}
    for row in rows:
        text = says(row)
        if text is not None:
            said.setdefault(text, []).append(f"#{row[number]}")
    return [f"{', '.join(numbers)}: {text}" for text, numbers in said.items()]


def _serve_notes(records: Sequence[dict[str, Any]]) -> list[str]:
    """Under the serving table: its legend, each multi-node offer's verdict and fabric as
    estimated (offers alike share a line), and what each error band means."""
    verdicts = _said_of(
        records,
        lambda r: (
            f"{r['verdict']} (fabric as estimated: {r.get('fabric_estimated_as')})"
            if _spans_nodes(r)
            else None
        ),
        "rank",
    )
    caveat = _serving_band_caveat(records)
    return [SERVE_LEGEND, *verdicts, *caveat, *_band_notes(records, serving=True)]


RANGE_NOTE = (
    "days and cost: a range where the fabric is unknown, ranked by the worse end; cost is the "
    "whole cost (GPUs billed, a reserved term in full, storage, egress), without the parts "
    '"not priced" names'
)
EXCLUDED_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "provider": _seller,
    "offer": lambda r: r["offer_label"],  # GPUs per instance, GPU and fabric as stated
    "GPUs": lambda r: r["gpus"],
    "offer id": lambda r: r["instance_type"],  # to find the offer a reason is about
    "region": lambda r: r["region"],
    "tier": lambda r: r["pricing_tier"],
    "USD/GPU-h": lambda r: _number(r["price_usd_per_gpu_hour"], 3),
    "why excluded": lambda r: r["reason"],
}
# a hardware profile states no price: the cost is the buyer's price times the GPU-hours
ESTIMATE_NOTE = (
    "days: time to train; cost = GPU-hours x your price per GPU-hour (--usd-per-gpu-hour; "
    "fabricscope rank prices the offers); --format json gives every field"
)
ESTIMATE_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "GPU": lambda r: r["gpu_model"],
    "GPUs": lambda r: r["gpu_count"],
    "fabric": lambda r: r.get("fabric_class"),
    "fabric figures": lambda r: r["fabric_source"],
    "layout": lambda r: r["layout"],
    "step (s)": lambda r: _number(r["step_time_s"], 2),
    "MFU": lambda r: _percent(r["mfu"]),
    "days": lambda r: _days(r["time_to_train_h"]),
    BAND_HEADER: _band,
    "GPU-hours": lambda r: _number(r["gpu_hours"], 0),
    "comm exposed": lambda r: _percent(r["comm_fraction_exposed"]),
    "verdict": lambda r: r["verdict"],
    "GB per GPU": lambda r: _number(r["memory_gb_per_gpu"], 1),
    "fits": lambda r: _yes_no(r["fits_memory"]),
}
# a served model on each hardware profile (estimate --serve): a row a line at 200 columns, as
# rank --serve's (``SERVE_TABLE``): each profile by its place in the file, the layout short,
# the verdict as "fabric share" ("1 node" or the fabric's share), read in full under the table
# where a replica spans nodes or none fits (``_serve_estimate_notes``)
SERVE_ESTIMATE_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "#": lambda r: r["profile"],
    "GPU": lambda r: _gpu_name(r["gpu_model"]),
    "GPUs": lambda r: r["gpu_count"],
    "fabric": lambda r: r.get("fabric_class"),
    "layout": lambda r: _layout_short(r["layout"]),
    "tok/s/GPU": lambda r: _number(r["tokens_per_s_per_gpu"], 0),
    BAND_HEADER: _band,
    # at the percentile the targets hold for (the note says which); JSON has the means too
    "TPOT (ms)": lambda r: _ms(r["tpot_ms_at_percentile"]),
    "TTFT (ms)": lambda r: _ms(r["ttft_ms_at_percentile"]),
    "req/s": lambda r: _number(r.get("capacity_requests_per_s"), 1),
    "GPUs needed": lambda r: _number(r["gpus_needed"], 0),
    "GB per GPU": lambda r: _number(r["memory_gb_per_gpu"], 1),
    "fabric share": _fabric_short,
}
SERVE_ESTIMATE_OPTIONAL = ["GB per GPU", "TTFT (ms)", "GPUs", "req/s", "layout"]
SERVE_ESTIMATE_LEGEND = (
    f"#: the profile's place in --hardware; {TOKENS_LEGEND}; {LAYOUT_LEGEND}; fabric share: "
    f"{FABRIC_SHORT_LEGEND}, each such profile's verdict below"
)


def _serve_estimate_notes(profiles: Sequence[dict[str, Any]]) -> list[str]:
    """Under the estimate --serve table: its legend, and each profile's verdict in full where
    a replica spans nodes, or that none fits (profiles alike share a line)."""

    def says(row: dict[str, Any]) -> str | None:
        if _missing(row.get("verdict")):
            return "no replica fits and meets the targets"
        return str(row["verdict"]) if _spans_nodes(row) else None

    return [SERVE_ESTIMATE_LEGEND, *_said_of(profiles, says, "profile")]


# left out first when a table is wider than the terminal, in this order
RANK_OPTIONAL = ["Pareto", "price age (d)", "not priced", "verdict", "region", "MFU", BAND_HEADER]
EXCLUDED_OPTIONAL = ["USD/GPU-h", "tier", "region"]
ESTIMATE_OPTIONAL = ["fabric figures", "step (s)", "comm exposed", "GPUs", "verdict"]


def _print_records(
    spec: dict[str, Callable[[dict[str, Any]], Any]],
    records: Sequence[dict[str, Any]],
    title: str,
    notes: Sequence[str] = (),
    optional: Sequence[str] = (),
    whole: bool = False,
) -> None:
    """Records as a table of the ``spec``'s columns (header -> the value shown)."""
    rows = [[show(record) for show in spec.values()] for record in records]
    print_rows(list(spec), rows, OutputFormat.TABLE, title, notes, optional, whole)


def _band_notes(records: Sequence[dict[str, Any]], serving: bool = False) -> list[str]:
    """What the error band column says, once per band the shown rows have (a served model's:
    of its output tokens/s per GPU at the latency target)."""
    from fabricscope.model.error_bands import SERVING, TRAINING, notes

    scheme = SERVING if serving else TRAINING
    return [f"{BAND_HEADER}: {text}" for text in notes(records, scheme)]


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.0%}"


@app.command()
def rank(
    workload: Annotated[
        str, typer.Option("--workload", "-w", help="A preset name or a workload JSON file.")
    ],
    gpus: Annotated[
        str | None,
        typer.Option(
            "--gpus",
            help="GPU count: 64, a list 8,16,64 or a range 64-512 (--serve: default "
            f"{SERVE_GPUS}, each offer at the fewest that carry the load).",
            show_default=False,
        ),
    ] = None,
    tier: Annotated[
        list[str] | None,
        typer.Option("--tier", help="Pricing tier (repeatable): on_demand, spot, reserved_1y..."),
    ] = None,
    objective: Annotated[
        str, typer.Option(help="cost, time, or blend (see --time-weight).")
    ] = "cost",
    time_weight: Annotated[
        float, typer.Option(help="blend: weight of time, 0-1.", callback=_finite)
    ] = 0.5,
    gpu_model: Annotated[
        list[str] | None, typer.Option("--gpu-model", help="Allowed GPU (repeatable).")
    ] = None,
    region: Annotated[list[str] | None, typer.Option(help="Allowed region (repeatable).")] = None,
    max_budget: Annotated[
        float | None, typer.Option(help="Budget in USD.", callback=_finite)
    ] = None,
    deadline_days: Annotated[
        float | None, typer.Option(help="Deadline in days (as the app asks).", callback=_finite)
    ] = None,
    deadline_hours: Annotated[
        float | None,
        typer.Option(
            help="Deprecated: the deadline in hours; use --deadline-days.", callback=_finite
        ),
    ] = None,
    min_fabric: Annotated[
        str | None, typer.Option(help="Minimum fabric class, e.g. roce or infiniband.")
    ] = None,
    multi_node: Annotated[
        bool, typer.Option("--multi-node", help="Only offers that state multi-node support.")
    ] = False,
    what_if_fabric: Annotated[
        str | None, typer.Option(help="Estimate every offer as if it had this fabric class.")
    ] = None,
    max_price_age_days: Annotated[
        float | None,
        typer.Option(
            help="Leave out prices their source observed more than this many days ago.",
            callback=_finite,
        ),
    ] = None,
    show_excluded: Annotated[
        bool, typer.Option("--excluded", help="List the excluded offers and why instead.")
    ] = False,
    top: Annotated[
        int | None,
        typer.Option(
            help=f"Show the first N rows, 0 for all (default: {TABLE_TOP} in a table, all in "
            "json and csv).",
            show_default=False,
        ),
    ] = None,
    dataset_tb: Annotated[
        float | None,
        typer.Option(help="Whole cost: TB of training data kept on storage.", callback=_finite),
    ] = None,
    checkpoints_kept: Annotated[
        int, typer.Option(help="Whole cost: checkpoints kept on storage at once.")
    ] = 2,
    egress_tb: Annotated[
        float | None,
        typer.Option(
            help="Whole cost: TB downloaded (default: the trained weights).", callback=_finite
        ),
    ] = None,
    storage_usd_per_tb_month: Annotated[
        float | None,
        typer.Option(help="Whole cost: your storage price, for every provider.", callback=_finite),
    ] = None,
    egress_usd_per_gb: Annotated[
        float | None,
        typer.Option(help="Whole cost: your egress price, for every provider.", callback=_finite),
    ] = None,
    support_pct: Annotated[
        float | None,
        typer.Option(help="Whole cost: a support plan, as % of the GPU bill.", callback=_finite),
    ] = None,
    stated_support: Annotated[
        bool,
        typer.Option("--stated-support", help="Whole cost: add each provider's stated plan."),
    ] = False,
    serve: ServeOption = False,
    requests_per_s: RequestsOption = None,
    output_tokens_per_s: TokensOption = None,
    ttft_ms: TtftOption = None,
    tpot_ms: TpotOption = None,
    hours: HoursOption = None,
    percentile: PercentileOption = None,
    disaggregated: DisaggregatedOption = None,
    attention_dp: AttentionDpOption = None,
    mix: MixOption = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Rank current offers by time-to-train (or, with --serve, cost per million tokens
    served) and whole cost for a workload.

    Unknown fabrics are estimated at both ends (plain Ethernet to InfiniBand) and ranked by
    the pessimistic end; the JSON output is an object whose "offers" key holds the rows.
    With --serve the workload is a serving preset or file; each offer is ranked at the
    fewest GPUs tried that carry the load at the latency targets, for the service's hours.
    """
    from fabricscope.rank import ranking

    settings = _settings(warehouse)
    if serve and (deadline_days is not None or deadline_hours is not None):
        raise UserError(
            "--serve has no deadline: give latency targets (--ttft-ms, --tpot-ms)", code=2
        )
    if what_if_fabric is not None and what_if_fabric not in ranking.WHAT_IF_GBPS_PER_NODE:
        raise UserError(
            f"--what-if-fabric {what_if_fabric!r}: a fabric that joins nodes, one of "
            f"{', '.join(sorted(ranking.WHAT_IF_GBPS_PER_NODE))}",
            code=2,
        )
    request = _rank_request(
        workload,
        gpus,
        serve,
        {
            "requests_per_s": requests_per_s,
            "output_tokens_per_s": output_tokens_per_s,
            "ttft_ms": ttft_ms,
            "tpot_ms": tpot_ms,
            "hours": hours,
            **_serving_options(percentile, disaggregated, attention_dp, mix),
        },
        tiers=tuple(tier or ["on_demand"]),
        gpu_models=tuple(gpu_model) if gpu_model else None,
        regions=tuple(region) if region else None,
        max_budget_usd=max_budget,
        deadline_hours=_deadline_hours(deadline_days, deadline_hours),
        min_fabric_class=min_fabric,
        multi_node_required=multi_node,
        objective=objective,
        time_weight=time_weight,
        fabric_override=what_if_fabric,
        max_price_age_days=max_price_age_days,
        costs={
            "dataset_tb": dataset_tb,
            "checkpoints_kept": checkpoints_kept,
            "egress_tb": egress_tb,
            "storage_usd_per_tb_month": storage_usd_per_tb_month,
            "egress_usd_per_gb": egress_usd_per_gb,
            "support_pct": support_pct,
            "include_stated_support": stated_support,
        },
    )
    if top is not None and top < 0:
        raise UserError(f"--top must be 0 (all rows) or more (got {top})", code=2)
    _require_warehouse(settings)  # after the request: bad input is exit 2 either way
    if what_if_fabric is not None and not show_excluded:
        # today's ranking and the what-if beside it, as the app shows them
        today = request.model_copy(update={"fabric_override": None})
        base = ranking.rank(settings.warehouse, today, settings.as_of)
        _print_what_if(base, base.what_if(what_if_fabric), gpus, top, fmt)
        return
    result = ranking.rank(settings.warehouse, request, settings.as_of)
    frame = result.excluded if show_excluded else result.offers
    shown = (TABLE_TOP if fmt is OutputFormat.TABLE else 0) if top is None else top
    records = ranking.records(frame.head(shown) if shown else frame)
    snapshot = result.snapshot.snapshot_id if result.snapshot else None
    if fmt is OutputFormat.JSON:
        payload = {
            "workload": request.workload.name,
            "snapshot_id": snapshot,
            "request": request.model_dump(mode="json", exclude={"workload"}),
            "excluded" if show_excluded else "offers": records,
            "providers": ranking.records(result.providers),
        }
        sys.stdout.write(json.dumps(payload, indent=2, default=_jsonable) + "\n")
        return
    if fmt is OutputFormat.CSV:
        columns = list(ranking.EXCLUDED_COLUMNS if show_excluded else result.columns)
        print_rows(columns, [[_rounded(r.get(c)) for c in columns] for r in records], fmt)
        return
    counts = gpus or SERVE_GPUS
    title = (
        f"{request.workload.name} on {counts} GPUs: {len(result.offers)} offers ranked, "
        f"{len(result.excluded)} excluded (snapshot {snapshot})"
    )
    notes = [] if show_excluded else [_serve_note(request.workload) if serve else RANGE_NOTE]
    if len(records) < len(frame):
        what = "excluded offers" if show_excluded else "offers"
        notes.append(
            f"showing {len(records)} of {len(frame)} {what}: --top 0 shows all; --format csv "
            "or json gives every field"
        )
    if show_excluded:
        _print_records(EXCLUDED_TABLE, records, title, notes, EXCLUDED_OPTIONAL)
    elif serve:
        notes[1:1] = _serve_notes(records)
        _print_records(SERVE_TABLE, records, title, notes, SERVE_OPTIONAL, whole=True)
    else:
        from fabricscope.model.error_bands import precision_notes, routing_notes

        gpus = [record.get("gpu_model") for record in records]
        notes += [
            *precision_notes(request.workload, gpus),
            *routing_notes(request.workload),
            *_band_notes(records),
        ]
        _print_records(RANK_TABLE, records, title, notes, RANK_OPTIONAL)


# Today's fabric beside the what-if, per ranked offer (ranking.what_if_changes)
def _costed_at(row: dict[str, Any]) -> str | None:
    """The Gb/s per GPU an offer is costed at with the what-if fabric, or why it is not ranked."""
    gbps = row["fabric_gbps_what_if"]
    return row["what_if_note"] if _missing(gbps) else f"{gbps:,g}"


def _change(value: float | None) -> str | None:
    return None if _missing(value) else f"{value:+.0%}"


WHAT_IF_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    **OFFER_HEAD,
    "fabric now": lambda r: r["fabric_now"],
    "Gb/s/GPU": _costed_at,
    "days now": lambda r: _days(r["time_to_train_h"], r["time_to_train_h_low"]),
    "days": lambda r: _days(r["time_to_train_h_what_if"], r["time_to_train_h_low_what_if"]),
    "time": lambda r: _change(r["time_change"]),
    "cost (USD)": lambda r: (
        None if _missing(r["cost_change_usd"]) else f"{r['cost_change_usd']:+,.0f}"
    ),
    BAND_HEADER: _band,
    "comm now": lambda r: _percent(r["comm_fraction_exposed"]),
    "comm": lambda r: _percent(r["comm_fraction_exposed_what_if"]),
    "verdict": lambda r: r["verdict_what_if"],
}
WHAT_IF_OPTIONAL = ["fabric now", "verdict", "comm now", "days now", "GPUs", BAND_HEADER]
# says which columns are the what-if's
WHAT_IF_LEGEND = (
    "Gb/s/GPU, days, comm (exposed communication) and verdict: with the what-if fabric; time "
    "and cost (USD): the change from today's fabric, at the worse ends"
)


def _costed_at_short(row: dict[str, Any]) -> str | None:
    """``_costed_at``, or 'not ranked' where the what-if fabric leaves an offer out (why, under
    the table)."""
    return "not ranked" if not _missing(row["what_if_note"]) else _costed_at(row)


# a served model's (rank --serve --what-if-fabric): output tokens/s per GPU and USD per
# million output tokens today and with the other fabric, and the change in each; a row a line
# at 200 columns as rank --serve's table (``SERVE_TABLE``), the verdict and fabric with the
# other fabric as "1 node" or the fabric's share, each multi-node offer's verdict and fabric
# now, and why an offer is not ranked, in full under the table (``_serve_what_if_notes``)
SERVE_WHAT_IF_TABLE: dict[str, Callable[[dict[str, Any]], Any]] = {
    **SERVE_OFFER_HEAD,
    "Gb/s/GPU": _costed_at_short,
    "GPUs then": lambda r: r["gpus_what_if"],
    "tok/s/GPU now": lambda r: _tokens(r["tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu_low"]),
    "tok/s/GPU": lambda r: _tokens(
        r["tokens_per_s_per_gpu_what_if"], r["tokens_per_s_per_gpu_low_what_if"]
    ),
    "tok/s": lambda r: _change(r["tokens_change"]),
    "USD/M out now": lambda r: _per_million(r["usd_per_million_output_tokens"]),
    "USD/M out": lambda r: _per_million(r["usd_per_million_output_tokens_what_if"]),
    "USD/M": lambda r: _change(r["usd_per_million_change"]),
    BAND_HEADER: _band,
    "TPOT (ms)": lambda r: _ms(r["tpot_ms_what_if"], r["tpot_ms_low_what_if"]),
    "fabric": lambda r: _fabric_short(r, what_if=True),
}
SERVE_WHAT_IF_OPTIONAL = [
    "per node",
    "GPUs then",
    "tok/s/GPU now",
    "USD/M out now",
    "TPOT (ms)",
    "GPUs",
    BAND_HEADER,
]
SERVE_WHAT_IF_LEGEND = (
    "Gb/s/GPU, GPUs then (rented), tok/s/GPU (output tokens per second per GPU), USD/M out, "
    "TPOT and fabric: with the what-if fabric; tok/s and USD/M: the change from today's "
    f"fabric; {OFFER_LEGEND}; fabric: {FABRIC_SHORT_LEGEND} at the worse end, each such "
    "offer's verdict below"
)


def _serve_what_if_notes(records: Sequence[dict[str, Any]], fabric: str) -> list[str]:
    """Under the serving what-if table: each multi-node offer's verdict with ``fabric`` and
    today's fabric as estimated, and why an offer is not ranked with ``fabric`` (offers alike
    share a line)."""
    from fabricscope.rank.estimators import spans_nodes

    def verdicts(row: dict[str, Any]) -> str | None:
        verdict = row.get("verdict_what_if")
        if not spans_nodes(verdict):
            return None
        return f"with {fabric}: {verdict} (fabric now, as estimated: {row['fabric_now']})"

    def left_out(row: dict[str, Any]) -> str | None:
        note = row["what_if_note"]
        return None if _missing(note) else f"not ranked with {fabric}: {note}"

    return _said_of(records, verdicts, "rank") + _said_of(records, left_out, "rank")


# each kind of workload's what-if table: its columns, those left out first, its legend
WHAT_IF_TABLES: dict[str, tuple[dict[str, Callable[[dict[str, Any]], Any]], list[str], str]] = {
    "training": (WHAT_IF_TABLE, WHAT_IF_OPTIONAL, WHAT_IF_LEGEND),
    "serving": (SERVE_WHAT_IF_TABLE, SERVE_WHAT_IF_OPTIONAL, SERVE_WHAT_IF_LEGEND),
}


def _print_what_if(
    base: ranking.RankResult, other: ranking.RankResult, gpus: str, top: int | None, fmt: Any
) -> None:
    """The what-if as the app shows it: each offer today and with the other fabric."""
    from fabricscope.rank import ranking

    fabric = other.request.fabric_override or ""
    kind = base.estimator.kind
    changes = ranking.what_if_changes(base, other)
    shown = (TABLE_TOP if fmt is OutputFormat.TABLE else 0) if top is None else top
    records = ranking.records(changes.head(shown) if shown else changes)
    rule = ranking.what_if_rule(fabric, kind=kind)
    if fmt is OutputFormat.JSON:
        payload = {
            "workload": base.request.workload.name,
            "snapshot_id": base.snapshot.snapshot_id if base.snapshot else None,
            "what_if_fabric": fabric,
            "rule": rule,
            "what_if": records,
            "offers": ranking.records(other.offers),
        }
        sys.stdout.write(json.dumps(payload, indent=2, default=_jsonable) + "\n")
        return
    if fmt is OutputFormat.CSV:
        columns = list(changes.columns)
        print_rows(columns, [[_rounded(r.get(c)) for c in columns] for r in records], fmt)
        return
    title = (
        f"{base.request.workload.name} on {gpus or SERVE_GPUS} GPUs: today's fabric and "
        f"{fabric} (what if), {len(changes)} offers"
    )
    table, optional, legend = WHAT_IF_TABLES[kind]
    serving = kind == "serving"
    notes = [ranking.what_if_summary(changes, fabric, kind), legend, rule]
    if serving:
        notes[:0] = [_serve_note(base.request.workload)]
        notes[3:3] = _serve_what_if_notes(records, fabric)  # under the legend they serve
        notes += _serving_band_caveat(records)
    notes += _band_notes(records, serving=serving)
    if len(records) < len(changes):
        notes.append(f"showing {len(records)} of {len(changes)} offers: --top 0 shows all")
    _print_records(table, records, title, notes, optional, whole=serving)


def _deadline_hours(days: float | None, hours: float | None) -> float | None:
    """The deadline from --deadline-days, or from the deprecated --deadline-hours; not both."""
    if days is not None and hours is not None:
        raise UserError("give the deadline once, with --deadline-days", code=2)
    if hours is not None:
        err.print("note: --deadline-hours is deprecated; use --deadline-days")
        return hours
    if days is not None and not days > 0:
        raise UserError(f"--deadline-days must be more than 0 (got {days:g})", code=2)
    return None if days is None else days * 24


@app.command()
def calibrate(
    file: Annotated[Path, typer.Argument(help="nccl-tests output (all_reduce_perf, ...).")],
    provider: Annotated[str, typer.Option(help="The provider the run was measured on.")],
    fabric_class: Annotated[str, typer.Option(help="Its fabric class (infiniband, roce...).")],
    collective: Annotated[
        str | None, typer.Option(help="all_reduce, all_gather... if the output does not say.")
    ] = None,
    nodes: Annotated[
        int | None, typer.Option(help="Nodes in the run, if the output does not list hosts.")
    ] = None,
    note: Annotated[str | None, typer.Option(help="Where and how it was measured.")] = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Fit latency and bus bandwidth from nccl-tests output and store it for the model."""
    from fabricscope.evidence import calibrate as calibrating
    from fabricscope.model.calibration import CalibrationError
    from fabricscope.model.hardware import REFERENCE_NODES, REFERENCE_RANKS, latency_multiplier

    settings = _settings(warehouse)
    settings.require_writable()
    if not file.is_file():
        raise UserError(f"no such file: {file}", code=2)
    text = file.read_text(encoding="utf-8", errors="replace")
    try:
        fitted = calibrating.fit_upload(text, provider, fabric_class, collective, nodes)
    except CalibrationError as exc:
        raise UserError(f"{file.name}: {exc}", code=2) from None
    calibrating.store(settings.warehouse, fitted, text, file.name, note)
    fit = fitted.fit
    print_rows(
        [
            "calibration_id",
            "provider",
            "fabric_class",
            "collective",
            "ranks",
            "nodes",
            "alpha_us",
            "busbw_gbytes_s",
        ],
        [
            [
                fitted.calibration_id,
                provider,
                fabric_class,
                fit.collective.value,
                fit.n_ranks,
                fitted.n_nodes,
                None if fit.alpha_us is None else round(fit.alpha_us, 2),
                round(fit.busbw_gbytes_s, 2),
            ]
        ],
        fmt,
        title="calibration stored",
    )
    if fit.collective.value != "all_reduce" or not fitted.n_nodes or fitted.n_nodes < 2:
        # stored as measured, but the model reads multi-node all-reduce runs only
        err.print(
            "note: rankings and estimates use multi-node all_reduce calibrations only; this one "
            "is stored for reference"
            + (" (give --nodes if the run spanned nodes)" if not fitted.n_nodes else "")
        )
    elif latency_multiplier(fit.alpha_us, fit.n_ranks, fitted.n_nodes) is None:
        err.print(
            "note: the model uses this run's bus bandwidth; its latency is compared with "
            f"InfiniBand's only on {REFERENCE_NODES} nodes x {REFERENCE_RANKS // REFERENCE_NODES}"
            " GPUs with latency-bound sizes, so the fabric class's latency stays"
        )


# ---- quotes (fabricscope/procurement/quotes.py)

quote_app = typer.Typer(
    help="Quotes you received: enter or import them; they are ranked beside list prices.",
    no_args_is_help=True,
)
app.add_typer(quote_app, name="quote")


class TemplateFormat(StrEnum):
    CSV = "csv"
    JSON = "json"


@quote_app.command("template")
def quote_template(
    fmt: Annotated[TemplateFormat, typer.Option("--format", "-f")] = TemplateFormat.CSV,
    fields: Annotated[bool, typer.Option("--fields", help="Each field and what it means.")] = False,
) -> None:
    """Print the quotes template (a CSV header or a JSON list) to fill in and import."""
    from fabricscope.procurement import quotes

    if fields:
        rows = [[f["field"], f["required"], f["meaning"]] for f in quotes.field_help()]
        print_rows(["field", "required", "meaning"], rows, OutputFormat.TABLE, "quote fields")
        return
    sys.stdout.write(quotes.template_csv() if fmt is TemplateFormat.CSV else quotes.template_json())


@quote_app.command("import")
def quote_import(
    file: Annotated[Path, typer.Argument(help="A CSV or JSON file shaped like the template.")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Store every quote of a file; a bad row is refused with its line and field (exit 1),
    the others are stored."""
    from fabricscope.procurement import quotes

    settings = _settings(warehouse)
    settings.require_writable()
    if not file.is_file():
        raise UserError(f"no such file: {file}", code=2)
    try:
        entered, refused = quotes.parse(file.read_bytes(), file.name)
    except quotes.QuoteFileError as exc:
        raise UserError(str(exc), code=2) from None
    _store_quotes(settings, entered, refused, file.name, fmt)


@quote_app.command("add")
def quote_add(
    fields: Annotated[
        list[str],
        typer.Argument(
            help="field=value for each field of the template (fabricscope quote template "
            "--fields), e.g. provider=lambda price_usd=1.85"
        ),
    ],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Store one quote given as field=value pairs."""
    from fabricscope.procurement import quotes
    from fabricscope.warehouse.models import QUOTE_FIELDS

    settings = _settings(warehouse)
    settings.require_writable()
    given: dict[str, str] = {}
    for pair in fields:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or name not in QUOTE_FIELDS:
            raise UserError(
                f"{pair!r}: give field=value with a field of the template ("
                f"{', '.join(QUOTE_FIELDS[:4])}, ...: fabricscope quote template --fields)",
                code=2,
            )
        if name in given:
            raise UserError(f"{name} is given twice", code=2)
        given[name] = value
    checked = quotes.check(given, "given")
    if not isinstance(checked, quotes.Quote):
        problems = "; ".join(f"{e.field or 'the quote'}: {e.message}" for e in checked)
        raise UserError(f"quote refused: {problems}", code=2)
    _store_quotes(settings, [quotes.Entered(checked, "given", None)], [], None, fmt)


def _store_quotes(
    settings: Settings,
    entered: Sequence[Any],
    refused: Sequence[Any],
    file_name: str | None,
    fmt: OutputFormat,
) -> None:
    from fabricscope.procurement import quotes
    from fabricscope.warehouse.models import utc_now

    for problem in refused:
        err.print(f"refused: {file_name + ' ' if file_name else ''}{problem}")
    done = quotes.store(settings.warehouse, entered, utc_now(), file_name)
    stored = set(done.stored)
    rows = []
    for item in entered:
        quote = item.quote
        rows.append(
            [
                quotes.quote_id(quote),
                item.where,
                quote.provider,
                quote.configuration,
                quote.gpu_model,
                round(quote.price_usd_per_gpu_hour, 4),
                quote.pricing_tier.value,
                quote.valid_until,
                "stored" if quotes.quote_id(quote) in stored else "already stored",
            ]
        )
    columns = [
        "quote_id",
        "where",
        "provider",
        "configuration",
        "gpu_model",
        "usd_per_gpu_hour",
        "pricing_tier",
        "valid_until",
        "status",
    ]
    _stored_report("quotes", columns, rows, done, len(refused), fmt)


def _stored_report(
    what: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    done: Any,
    refused: int,
    fmt: OutputFormat,
) -> None:
    """What an import stored (``done``: EntriesStored), one row per entry read; exit 1 when
    rows were refused (each already said on stderr)."""
    title = f"{len(done.stored)} {what} stored, {len(done.already)} already stored"
    print_rows(columns, rows, fmt, title=title, notes=[] if rows else [f"no {what} to store"])
    if refused:
        raise UserError(f"{refused} rows refused (above); the {len(rows)} others were kept")


@quote_app.command("list")
def quote_list(
    as_of: Annotated[
        str | None,
        typer.Option(help="The day quotes are checked for expiry (YYYY-MM-DD; default today)."),
    ] = None,
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Every quote stored, oldest first, and whether it has expired."""
    import pandas as pd

    from fabricscope.procurement import quotes

    settings = _settings(warehouse)
    _require_warehouse(settings)
    try:
        today = date.fromisoformat(as_of) if as_of else datetime.now().astimezone().date()
    except ValueError:
        raise UserError(f"--as-of {as_of!r}: give a date as YYYY-MM-DD", code=2) from None
    frame = quotes.stored_quotes(settings.warehouse, today)
    for name in ("quoted_at", "valid_until", "available_from", "booked_from", "booked_to"):
        frame[name] = [None if _missing(v) else pd.Timestamp(v).date() for v in frame[name]]
    frame = frame.astype(object).where(frame.notna(), None)  # NULL, not <NA>
    columns = [
        "quote_id",
        "provider",
        "sold_by",
        "configuration",
        "gpu_model",
        "gpus",
        "price_usd_per_gpu_hour",
        "pricing_tier",
        "quoted_at",
        "valid_until",
        "expired",
        "source",
        "entered_by",
    ]
    if fmt is not OutputFormat.TABLE:
        columns = [c for c in frame.columns if c != "content_sha256"]
    rows = [[_jsonable(v) for v in row] for row in frame[columns].itertuples(index=False)]
    print_rows(
        columns,
        rows,
        fmt,
        title=f"{len(rows)} quotes",
        optional=["entered_by", "source", "sold_by", "gpus"],
    )


# ---- providers' answers to the questionnaire (fabricscope/procurement/rfi.py)

answers_app = typer.Typer(
    help="Providers' answers to the questionnaire: the template to send, the replies back in.",
    no_args_is_help=True,
)
app.add_typer(answers_app, name="answers")


@answers_app.command("template")
def answers_template(
    provider: Annotated[
        list[str] | None,
        typer.Option("--provider", "-p", help="A provider to ask (repeatable; default: all)."),
    ] = None,
    every_question: Annotated[
        bool,
        typer.Option("--all", help="Every question, not only those the evidence leaves open."),
    ] = False,
    fmt: Annotated[TemplateFormat, typer.Option("--format", "-f")] = TemplateFormat.CSV,
    fields: Annotated[bool, typer.Option("--fields", help="Each field and what it means.")] = False,
    warehouse: WarehouseOption = None,
) -> None:
    """Print the answers template: one row per provider and open question, to fill in."""
    from fabricscope.evidence import transparency
    from fabricscope.procurement import rfi

    if fields:
        rows = [[f["field"], f["required"], f["meaning"]] for f in rfi.field_help()]
        print_rows(["field", "required", "meaning"], rows, OutputFormat.TABLE, "answer fields")
        return
    settings = _settings(warehouse)
    _require_warehouse(settings)
    known = transparency.answers(settings.warehouse)
    providers = sorted({a.provider for a in known})
    asked = list(dict.fromkeys(provider or providers))
    unknown = [p for p in asked if p not in providers]
    if unknown:
        raise UserError(
            f"no provider {unknown[0]!r} in the warehouse; one of {', '.join(providers)}", code=2
        )
    rows = rfi.template_rows(asked, known, open_only=not every_question)
    sys.stdout.write(
        rfi.template_csv(rows) if fmt is TemplateFormat.CSV else rfi.template_json(rows)
    )


@answers_app.command("import")
def answers_import(
    file: Annotated[Path, typer.Argument(help="The answers template, filled in (CSV or JSON).")],
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Store providers' answers; a bad row is refused with its line and field (exit 1), the
    others are stored."""
    from fabricscope.procurement import entries, rfi
    from fabricscope.warehouse.models import utc_now

    settings = _settings(warehouse)
    settings.require_writable()
    if not file.is_file():
        raise UserError(f"no such file: {file}", code=2)
    try:
        entered, refused = rfi.parse(file.read_bytes(), file.name)
    except entries.EntryFileError as exc:
        raise UserError(str(exc), code=2) from None
    for problem in refused:
        err.print(f"refused: {file.name} {problem}")
    now = utc_now()
    done = rfi.store(settings.warehouse, entered, now, file.name)
    rows = []
    for item in entered:
        answer_id = rfi.answer_id(item.answer)
        given = item.answer
        rows.append(
            [
                answer_id,
                item.where,
                given.provider,
                given.question_id,
                given.value,
                given.answered_on,
                given.answered_by,
                "stored" if answer_id in done.stored else "already stored",
            ]
        )
    columns = [
        "answer_id",
        "where",
        "provider",
        "question_id",
        "value",
        "answered_on",
        "answered_by",
        "status",
    ]
    _stored_report("answers", columns, rows, done, len(refused), fmt)


@answers_app.command("list")
def answers_list(
    warehouse: WarehouseOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Every answer entered, oldest first; the latest a provider gave to a question counts."""
    import pandas as pd

    from fabricscope.procurement import rfi

    settings = _settings(warehouse)
    _require_warehouse(settings)
    frame = rfi.stored_answers(settings.warehouse)
    frame["answered_on"] = [
        None if _missing(v) else pd.Timestamp(v).date() for v in frame["answered_on"]
    ]
    frame = frame.astype(object).where(frame.notna(), None)
    columns = [
        "answer_id",
        "provider",
        "question_id",
        "value",
        "answered_on",
        "answered_by",
        "answer",
    ]
    if fmt is not OutputFormat.TABLE:
        columns = [c for c in frame.columns if c != "content_sha256"]
    rows = [list(row) for row in frame[columns].itertuples(index=False)]
    print_rows(columns, rows, fmt, title=f"{len(rows)} answers", optional=["answer", "answered_by"])


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def _hardware_rows(path: Path) -> list[dict[str, Any]]:
    from fabricscope.files import read_json_input
    from fabricscope.model.hardware import HardwareError, check_fields

    data = read_json_input(path, HardwareError)  # a missing file is one line too
    rows = data if isinstance(data, list) else [data]
    if not rows or not all(isinstance(r, dict) for r in rows):
        raise HardwareError(f"{path}: expected a JSON object or a list of objects")
    for number, row in enumerate(rows, start=1):
        check_fields(row, f"{path.name}: hardware profile {number}")
    return rows


def _layout(text: str, job: Workload, rows: list[dict[str, Any]]) -> scaling.LayoutGrid:
    """``tp=8,pp=4,dp=16,mb=1[,recompute=full][,cp=2][,vpp=4][,first=7,last=7]``;
    tp*pp*cp*dp must be the GPU count. Uneven pipeline stages are placed as Megatron-Core
    does (the first and last stage's layers, if given, else the plan's). What the layout
    leaves out (the micro-batch, the recompute) is searched, as the workload's own fields
    allow, never pinned to a default."""
    from fabricscope.model import scaling
    from fabricscope.model.hardware import HardwareError

    shown = _cut(text, 80)
    try:
        parts = dict(_layout_part(item) for item in text.split(","))

        def count(name: str, default: int | None = None) -> int | None:
            given = parts.pop(name, None)
            if given is None:
                return default
            if not re.fullmatch(r"\s*[-+]?\d{1,7}\s*", given):
                raise ValueError(
                    f"{name} must be a whole number up to 1,000,000 (got {_cut(given, 20)!r})"
                )
            return int(given)

        tp, pp, cp = count("tp", 1), count("pp", 1), count("cp", 1)
        assert tp is not None and pp is not None and cp is not None
        dp = count("dp")
        # left out: None, and LayoutGrid.partial takes the workload's own field or searches
        mb = count("mb")
        recompute, block = _recompute_choice(parts.pop("recompute", None))
        vpp, first, last = count("vpp"), count("first"), count("last")
    except ValueError as exc:
        raise HardwareError(f"--layout {shown!r}: {exc}") from None
    counts = (("tp", tp), ("pp", pp), ("dp", dp), ("mb", mb), ("cp", cp), ("vpp", vpp))
    for name, value in (*counts, ("first", first), ("last", last)):
        if value is not None and not 1 <= value <= 1_000_000:
            raise HardwareError(
                f"--layout {shown!r}: {name} must be a positive count (got {value})"
            )
    if parts:
        raise HardwareError(
            f"--layout: unknown keys {', '.join(parts)} (use tp, pp, dp, mb, recompute, cp, "
            "vpp, first, last)"
        )
    # the rules every layout keeps (scaling.LAYOUT_RULES, which the search keeps too), said
    # here by name instead of an estimate of NaN; then stages that add up to the layers
    for row in rows:
        gpus = int(row["gpu_count"])
        problem = scaling.layout_problem(job, gpus, tp, pp, cp, vpp or 1)
        if problem:
            raise HardwareError(f"--layout {shown!r}: {problem}")
        if dp is not None and tp * pp * cp * dp != gpus:
            raise HardwareError(
                f"--layout tp*pp*cp*dp = {tp * pp * cp * dp} but the profile has "
                f"{row['gpu_count']} GPUs"
            )
    try:
        scaling.stage_plan(job.layers, pp, first, last)
    except ValueError as exc:
        raise HardwareError(f"--layout {shown!r}: {exc}") from None
    return scaling.LayoutGrid.partial(job, tp, pp, mb, recompute, vpp, cp, first, last, block)


def _layout_part(item: str) -> tuple[str, str]:
    """One ``name=value`` of a layout."""
    name, equals, value = item.partition("=")
    if not equals or not name.strip():
        raise ValueError(f"each part is name=value, as tp=8 (got {_cut(item, 20)!r})")
    return name.strip(), value


def _recompute_choice(text: str | None) -> tuple[Recompute | None, float | None]:
    """A layout's ``recompute``: none, selective, full, or block-N% (full recompute of N% of
    each stage's layers, as an estimate reports it); None when not given (searched)."""
    from fabricscope.model.workload import Recompute

    if text is None:
        return None, None
    block = re.fullmatch(r"block-(\d{1,3})%", text.strip())
    if block:
        share = int(block.group(1)) / 100
        if not 0 < share <= 1:
            raise ValueError(f"recompute {text!r}: the block share must be 1-100%")
        return Recompute.FULL, share
    try:
        return Recompute(text.strip()), None
    except ValueError:
        raise ValueError(
            f"recompute {text!r}: use none, selective, full or block-N% (N% of each stage's "
            "layers fully recomputed)"
        ) from None


@app.command()
def serve(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1.", min=1, max=65535)] = 8501,
    warehouse: WarehouseOption = None,
) -> None:
    """Start the Streamlit app on localhost."""
    settings = _settings(warehouse)
    app_file = Path(__file__).resolve().parent / "app" / "app.py"
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
    except Exception as exc:
        code = _exit_code(exc)
        if code is None:
            raise
        err.print(f"error: {_cut(' '.join(str(exc).split()), MAX_ERROR_CHARS)}")
        return code
    return 0


def _exit_code(exc: Exception) -> int | None:
    """The exit code of an error a user can fix, or None for a bug (its traceback is wanted).
    Configuration and warehouse errors come from modules imported lazily: a module that is not
    loaded raised nothing, so it is looked up, never imported, here."""
    if isinstance(exc, UserError):
        return exc.code
    config = sys.modules.get("fabricscope.config")
    if config is not None and isinstance(exc, config.ConfigError):
        return 2
    db = sys.modules.get("fabricscope.warehouse.db")
    if db is not None and isinstance(exc, db.WarehouseError):
        return 1
    return None


if __name__ == "__main__":
    sys.exit(main())
