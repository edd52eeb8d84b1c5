"""Loading into a staging snapshot: reference CSVs and one run's rows, in bulk."""

from __future__ import annotations

import csv
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from fabricscope.warehouse.db import (
    REFERENCE_TABLES,
    DataTestFailure,
    PublishResult,
    SnapshotWriter,
    StageHook,
    WarehouseError,
    current_snapshot,
    reference_content_hash,
    run_content_hash,
)
from fabricscope.warehouse.gpus import REFERENCE_DIR
from fabricscope.warehouse.models import (
    FABRIC_COLUMNS,
    OFFER_COLUMNS,
    QUOTE_FIELDS,
    RFI_ANSWER_FIELDS,
    FabricFact,
    Offer,
    RunMode,
    RunStatus,
    utc_now,
)

Rows = pd.DataFrame | pa.Table


@dataclass(frozen=True)
class RunRecord:
    """One scrape run's ledger entry (a row of ``scrape_runs``)."""

    run_id: str
    source: str
    mode: RunMode
    started_at: datetime
    finished_at: datetime | None
    status: RunStatus
    items_scraped: int = 0
    items_dropped: int = 0
    dropped_by_reason: Mapping[str, int] = field(default_factory=dict)
    error_text: str | None = None
    scrapy_stats: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuarantinedItem:
    item_kind: str  # "offer" | "fabric_fact" | what the spider yielded
    reason: str
    raw: Mapping[str, Any]
    observed_at: datetime


@dataclass
class RunBatch:
    """What one run hands to the warehouse: its ledger entry and its rows."""

    run: RunRecord
    offers: Rows | None = None
    fabric: Rows | None = None
    quarantined: Sequence[QuarantinedItem] = ()


def new_run_id(source: str) -> str:
    return f"{source}-{utc_now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def offers_table(offers: Iterable[Offer]) -> pa.Table:
    rows = [offer.model_dump(mode="json") for offer in offers]
    return pa.Table.from_pylist(rows) if rows else _empty(OFFER_COLUMNS)


def fabric_table(facts: Iterable[FabricFact]) -> pa.Table:
    rows = [fact.model_dump(mode="json") for fact in facts]
    return pa.Table.from_pylist(rows) if rows else _empty(FABRIC_COLUMNS)


def _empty(columns: Sequence[str]) -> pa.Table:
    return pa.table({name: pa.array([], pa.string()) for name in columns})


def _row_count(rows: Rows | None) -> int:
    return 0 if rows is None else (rows.num_rows if isinstance(rows, pa.Table) else len(rows))


# ------------------------------------------------------------------------ reference


def _table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        str(name)
        for (name,) in con.execute(
            "select column_name from information_schema.columns "
            "where table_name = ? order by ordinal_position",
            [table],
        ).fetchall()
    ]


def load_reference(con: duckdb.DuckDBPyConnection, reference_dir: Path = REFERENCE_DIR) -> str:
    """Replace the reference tables with the CSVs' content; returns their hash."""
    for table in REFERENCE_TABLES:
        path = reference_dir / f"{table}.csv"
        if not path.is_file():
            raise WarehouseError(f"reference file {path} is missing")
        with path.open(newline="", encoding="utf-8") as handle:
            header = next(csv.reader(handle), [])
        expected = _table_columns(con, table)
        if header != expected:
            raise WarehouseError(
                f"reference file {path.name}: columns {header} do not match the table "
                f"{table} ({expected})"
            )
        con.execute(f"delete from {table}")
        # the dialect and columns stated, not sniffed: a malformed row fails with its line
        # instead of loading with its columns shifted (the header is the table's, checked above)
        columns = ", ".join(f"'{name}': 'VARCHAR'" for name in expected)
        try:
            con.execute(
                f"insert into {table} by name select * from read_csv(?, header = true, "
                "auto_detect = false, delim = ',', quote = '\"', escape = '\"', "
                f"columns = {{{columns}}})",
                [str(path)],
            )
        except duckdb.Error as exc:
            raise WarehouseError(f"reference file {path.name} does not load: {exc}") from exc
    return reference_content_hash(con)


def _last_reference_hash(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute(
        "select content_hash from reference_loads order by snapshot_id desc limit 1"
    ).fetchone()
    return None if row is None else str(row[0])


def _load_reference_if_changed(writer: SnapshotWriter, reference_dir: Path) -> bool:
    assert writer.con is not None
    before = _last_reference_hash(writer.con)
    after = load_reference(writer.con, reference_dir)
    if after == before:
        return False
    writer.con.execute(
        "insert into reference_loads values (?, ?, ?)",
        [writer.next_snapshot_id, utc_now(), after],
    )
    writer.notes.append("loaded reference data from " + reference_dir.name + "/")
    return True


def init_warehouse(
    path: Path, reference_dir: Path = REFERENCE_DIR, on_stage: StageHook | None = None
) -> PublishResult:
    """Create or migrate the warehouse and load changed reference data.

    Publishes a snapshot only when something changed.
    """
    with SnapshotWriter(path, on_stage) as writer:
        migrated = writer.is_new or any(n.startswith("applied migrations") for n in writer.notes)
        reloaded = _load_reference_if_changed(writer, reference_dir)
        if not (migrated or reloaded):
            return PublishResult(current_snapshot(path), [*writer.notes, "already up to date"])
        info = writer.publish("reference" if reloaded else "migration")
        return PublishResult(info, writer.notes)


# ------------------------------------------------------------------------------ runs


def _insert_rows(con: duckdb.DuckDBPyConnection, table: str, run_id: str, rows: Rows) -> None:
    if _row_count(rows) == 0:
        return
    con.register("incoming_rows", rows)
    try:
        con.execute(
            f"insert into {table} by name select ?::varchar as run_id, * from incoming_rows",
            [run_id],
        )
    except duckdb.Error as exc:
        raise WarehouseError(f"rows for {table} do not fit its schema: {exc}") from exc
    finally:
        con.unregister("incoming_rows")


def _insert_run(
    con: duckdb.DuckDBPyConnection,
    run: RunRecord,
    *,
    snapshot_id: int,
    published: int,
    quarantined: int,
    content_hash: str | None,
) -> None:
    con.execute(
        "insert into scrape_runs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            run.run_id,
            run.source,
            run.mode.value,
            run.started_at,
            run.finished_at,
            run.status.value,
            run.items_scraped,
            published,
            run.items_dropped,
            json.dumps(dict(run.dropped_by_reason), sort_keys=True),
            quarantined,
            run.error_text,
            json.dumps(dict(run.scrapy_stats), sort_keys=True, default=str),
            content_hash,
            snapshot_id,
        ],
    )


def _insert_quarantine(
    con: duckdb.DuckDBPyConnection, run: RunRecord, items: Sequence[QuarantinedItem]
) -> None:
    if not items:
        return
    con.executemany(
        "insert into quarantined_items values (?, ?, ?, ?, ?, ?)",
        [
            [
                run.run_id,
                run.source,
                i.item_kind,
                i.reason,
                json.dumps(dict(i.raw), sort_keys=True, default=str),
                i.observed_at,
            ]
            for i in items
        ],
    )


def _rows_as_quarantine(batch: RunBatch, reason: str) -> list[QuarantinedItem]:
    """A run that failed its data tests keeps its rows, as quarantined items."""
    kept: list[QuarantinedItem] = list(batch.quarantined)
    for kind, rows in (("offer", batch.offers), ("fabric_fact", batch.fabric)):
        if _row_count(rows) == 0:
            continue
        frame = rows.to_pandas() if isinstance(rows, pa.Table) else rows
        for record in frame.to_dict(orient="records"):
            kept.append(QuarantinedItem(kind, reason, record, batch.run.finished_at or utc_now()))
    return kept


def _publish_once(
    path: Path,
    batch: RunBatch,
    on_stage: StageHook | None,
    reference_dir: Path,
    lock_wait_s: float,
) -> PublishResult:
    run = batch.run
    with SnapshotWriter(path, on_stage, lock_wait_s) as writer:
        con = writer.con
        assert con is not None
        if writer.is_new:
            _load_reference_if_changed(writer, reference_dir)
        published = 0
        content_hash = None
        if run.status is RunStatus.OK:
            _insert_rows(con, "offers_history", run.run_id, batch.offers)
            _insert_rows(con, "fabric_history", run.run_id, batch.fabric)
            published = _row_count(batch.offers) + _row_count(batch.fabric)
            content_hash = run_content_hash(con, run.run_id)
        if on_stage:
            on_stage("loaded")
        _insert_run(
            con,
            run,
            snapshot_id=writer.next_snapshot_id,
            published=published,
            quarantined=len(batch.quarantined),
            content_hash=content_hash,
        )
        _insert_quarantine(con, run, batch.quarantined)
        info = writer.publish("run", run.run_id)
        return PublishResult(info, writer.notes)


def publish_run(
    path: Path,
    batch: RunBatch,
    on_stage: StageHook | None = None,
    reference_dir: Path = REFERENCE_DIR,
    lock_wait_s: float = 0.0,
) -> tuple[RunStatus, PublishResult]:
    """Publish one run as the next snapshot.

    A run whose rows fail the SQL data tests is recorded as ``quarantined`` with
    the failing tests named and its rows kept in ``quarantined_items``; the
    source's last good rows stay current. Returns the status as recorded.
    """
    if batch.run.status is RunStatus.RUNNING:
        raise WarehouseError(f"run {batch.run.run_id} is still running; publish it when it ends")
    try:
        return batch.run.status, _publish_once(path, batch, on_stage, reference_dir, lock_wait_s)
    except DataTestFailure as failure:
        if batch.run.status is not RunStatus.OK:
            raise
        reason = str(failure)
        refused = RunBatch(
            run=replace(batch.run, status=RunStatus.QUARANTINED, error_text=reason),
            quarantined=_rows_as_quarantine(batch, reason),
        )
        result = _publish_once(path, refused, on_stage, reference_dir, lock_wait_s)
        result.notes.append(f"run {batch.run.run_id} quarantined: {reason}")
        return RunStatus.QUARANTINED, result


# ---------------------------------------------------------------------- calibrations

CALIBRATION_COLUMNS = (
    "calibration_id",
    "provider",
    "fabric_class",
    "collective",
    "n_ranks",
    "n_nodes",
    "gpus_per_node",
    "alpha_us",
    "busbw_gbytes_s",
    "fitted_from_bytes",
    "fitted_to_bytes",
    "file_name",
    "file_sha256",
    "raw_text",
    "note",
    "uploaded_at",
)


def publish_calibration(
    path: Path, record: Mapping[str, Any], lock_wait_s: float = 0.0
) -> PublishResult:
    """Store one measured collective (a fitted nccl-tests run) as the next snapshot."""
    missing = [name for name in CALIBRATION_COLUMNS if name not in record]
    if missing:
        raise WarehouseError(f"calibration record lacks {', '.join(missing)}")
    with SnapshotWriter(path, None, lock_wait_s) as writer:
        con = writer.con
        assert con is not None
        if writer.is_new:
            _load_reference_if_changed(writer, REFERENCE_DIR)
        columns = ", ".join((*CALIBRATION_COLUMNS, "snapshot_id"))
        marks = ", ".join("?" * (len(CALIBRATION_COLUMNS) + 1))
        con.execute(
            f"insert into fabric_calibrations ({columns}) values ({marks})",
            [*(record[name] for name in CALIBRATION_COLUMNS), writer.next_snapshot_id],
        )
        info = writer.publish("calibration", note=str(record["calibration_id"]))
        return PublishResult(info, writer.notes)


@dataclass(frozen=True)
class Entries:
    """A table the buyer appends to (quotes, providers' answers): its name, the columns a
    row is stored with (besides snapshot_id), its id column, and the snapshot kind."""

    table: str
    columns: tuple[str, ...]
    id_column: str
    kind: str


QUOTES = Entries(
    "quotes",
    (
        "quote_id",
        *QUOTE_FIELDS,
        "price_usd_per_gpu_hour",
        "entered_at",
        "file_name",
        "line",
        "content_sha256",
    ),
    "quote_id",
    "quotes",
)
RFI_ANSWERS = Entries(
    "rfi_answers",
    (
        "answer_id",
        *RFI_ANSWER_FIELDS,
        "questionnaire_version",
        "entered_at",
        "file_name",
        "line",
        "content_sha256",
    ),
    "answer_id",
    "answers",
)


@dataclass(frozen=True)
class EntriesStored:
    """What one import stored: the new rows' ids and the ids of those already stored."""

    result: PublishResult | None
    stored: tuple[str, ...]
    already: tuple[str, ...]


def publish_entries(
    path: Path, entries: Entries, records: Sequence[Mapping[str, Any]], lock_wait_s: float = 0.0
) -> EntriesStored:
    """Append rows (each with ``entries.columns``) as the next snapshot, each once: a row whose
    content_sha256 is already stored is skipped and named in ``already``. Nothing new: no
    snapshot. The table is append-only: nothing else writes it."""
    for record in records:
        missing = [name for name in entries.columns if name not in record]
        if missing:
            raise WarehouseError(f"{entries.table} record lacks {', '.join(missing)}")
    with SnapshotWriter(path, None, lock_wait_s) as writer:
        con = writer.con
        assert con is not None
        if writer.is_new:
            _load_reference_if_changed(writer, REFERENCE_DIR)
        table, id_column = entries.table, entries.id_column
        known = dict(con.execute(f"select content_sha256, {id_column} from {table}").fetchall())
        fresh: dict[str, Mapping[str, Any]] = {}
        already: list[str] = []
        for record in records:
            sha = str(record["content_sha256"])
            if sha in known or sha in fresh:
                already.append(known.get(sha) or str(fresh[sha][id_column]))
            else:
                fresh[sha] = record
        if not fresh:
            return EntriesStored(None, (), tuple(already))
        columns = ", ".join((*entries.columns, "snapshot_id"))
        marks = ", ".join("?" * (len(entries.columns) + 1))
        con.executemany(
            f"insert into {table} ({columns}) values ({marks})",
            [
                [*(record[name] for name in entries.columns), writer.next_snapshot_id]
                for record in fresh.values()
            ],
        )
        ids = tuple(str(record[id_column]) for record in fresh.values())
        info = writer.publish(entries.kind, note=f"{len(ids)} {table}: {', '.join(ids)}"[:500])
        return EntriesStored(PublishResult(info, writer.notes), ids, tuple(already))


def publish_estimates(
    path: Path,
    rows: pd.DataFrame,
    lock_wait_s: float = 0.0,
    rankings: pd.DataFrame | None = None,
    exclusions: pd.DataFrame | None = None,
    serving_rows: pd.DataFrame | None = None,
) -> PublishResult:
    """Store materialised rankings as the next snapshot; the published offers are untouched.

    ``rows``: the ranked offers, shaped like the ``estimates`` table without ``snapshot_id``;
    ``rankings``: one row per ranking (``estimate_rankings``) and ``exclusions``: the offers
    each left out (``estimate_exclusions``), both shaped likewise, or None for none;
    ``serving_rows``: the serving rankings' ranked offers (``serving_estimates``)."""
    with SnapshotWriter(path, None, lock_wait_s) as writer:
        con = writer.con
        assert con is not None
        count = 0
        for table, frame in (
            ("estimates", rows),
            ("estimate_rankings", rankings),
            ("estimate_exclusions", exclusions),
            ("serving_estimates", serving_rows),
        ):
            if frame is None or frame.empty:
                continue
            columns = [c for c in _table_columns(con, table) if c != "snapshot_id"]
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise WarehouseError(f"{table} rows lack {', '.join(missing)}")
            stored = frame[columns].copy()
            stored.insert(0, "snapshot_id", writer.next_snapshot_id)
            if table == "estimate_exclusions":
                # only the latest rankings are served: their exclusions (thousands of rows a
                # ranking) are kept, not a history of them
                con.execute("delete from estimate_exclusions")
            con.register("new_rows", stored)
            con.execute(f"insert into {table} by name select * from new_rows")
            con.unregister("new_rows")
            if table in ("estimates", "serving_estimates"):
                count += len(stored)
        info = writer.publish("estimates", note=f"{count} ranked offers")
        return PublishResult(info, writer.notes)
