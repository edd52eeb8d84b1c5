"""The warehouse file: read-only reads and the snapshot publishing protocol.

One published file (``data/warehouse.duckdb`` by default) is only ever opened
read-only. A writer takes a single-writer lock, copies the published file to a
staging file, changes the copy (migrations, reference data, one run's rows in
bulk), runs the SQL data tests, CHECKPOINTs, closes and renames the copy over the
published file. Readers never block the writer and always see one whole snapshot;
a crash at any moment leaves the last published snapshot in place.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import shutil
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from fabricscope.warehouse.models import utc_now

log = logging.getLogger(__name__)

SQL_DIR = Path(__file__).parent / "sql"
MIGRATIONS_DIR = SQL_DIR / "migrations"
VIEWS_DIR = SQL_DIR / "views"
DATA_TESTS_DIR = SQL_DIR / "tests"

# Called with the name of each publishing stage as it is reached (progress, tests).
StageHook = Callable[[str], None]


class WarehouseError(Exception):
    """A problem the user can act on; the message says what and what to do."""


class WarehouseMissingError(WarehouseError):
    pass


class WarehouseBusyError(WarehouseError):
    pass


class DataTestFailure(WarehouseError):
    def __init__(self, failures: dict[str, int]) -> None:
        self.failures = failures
        listed = ", ".join(f"{name} ({rows} rows)" for name, rows in sorted(failures.items()))
        super().__init__(f"data tests failed: {listed}")


@dataclass(frozen=True)
class SnapshotInfo:
    """Which published snapshot a read saw; callers key their caches on it."""

    snapshot_id: int
    published_at: datetime
    snapshot_hash: str


@dataclass(frozen=True)
class WarehousePaths:
    published: Path

    @property
    def directory(self) -> Path:
        return self.published.parent

    @property
    def lock(self) -> Path:
        return self.published.with_name(self.published.name + ".lock")

    @property
    def wal(self) -> Path:
        return wal_of(self.published)

    def staging(self, tag: str) -> Path:
        return self.published.with_name(f"{self.published.name}.staging-{tag}")

    def orphaned_staging(self) -> list[Path]:
        return sorted(self.directory.glob(f"{self.published.name}.staging-*"))


def wal_of(path: Path) -> Path:
    return path.with_name(path.name + ".wal")


def refuse_stray_wal(path: Path) -> None:
    """A published file never has a WAL: one there means someone wrote to it outside the
    publishing protocol, and DuckDB would replay it into every read (a query once saw 440 of
    835 rows), data no test has passed. Reads refuse until the next publish sets it aside."""
    if wal_of(path).exists():
        raise WarehouseError(
            f"{wal_of(path).name} lies beside the warehouse: it was written to outside "
            "fabricscope, so reads would mix unpublished changes in; the next "
            "`fabricscope refresh` replays it into a checked snapshot and keeps it aside "
            "(or move it away to read the last published snapshot)"
        )


def _sql_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.sql"))


# --------------------------------------------------------------------------- reads


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# DuckDB's words for a file that is not (or no longer) a whole database
_DAMAGED = ("not a valid DuckDB database", "Could not read enough bytes", "checksum")


def damaged(path: Path, exc: duckdb.Error) -> WarehouseError | None:
    """The error to raise if ``exc`` says the warehouse file itself is damaged, else None."""
    # a writer reads the file through its staging copy: name the file the person knows
    message = re.sub(re.escape(str(path)) + r"\.staging-[\w-]+", str(path), first_line(exc))
    if not any(word in message for word in _DAMAGED):
        return None
    return damaged_file(path, message)


def damaged_file(path: Path, why: str) -> WarehouseError:
    return WarehouseError(
        f"the warehouse {path} is damaged or not a warehouse ({why}): move it aside, then "
        "rebuild it (`fabricscope init` and `fabricscope refresh`) or restore a backup copy "
        "that passes `fabricscope status --verify` (docs/OPERATIONS.md, Backup and restore)"
    )


# DuckDB's file layout (storage/storage_info.hpp, common/checksum.cpp in its source): a main
# header and two database headers of 4 KiB each (the valid one with the higher iteration is
# current), then blocks of block_alloc_size bytes. Every header and block starts with a
# little-endian uint64 checksum of the rest: 5381 xor, over each uint64 word, word x this odd
# constant. DuckDB checks a block only when a query reads it, and no query reads every block:
# a full scan of every table skips the primary-key indexes' blocks, which init's and
# refresh's writes then hit (issue 33). So the whole file is checked here, as DuckDB would.
_HEADER_BYTES = 4096
_CHECKSUM_SEED = 5381
_CHECKSUM_FACTOR = np.uint64(0xBF58476D1CE4E5B9)
_MAGIC = b"DUCK"
# the storage versions (the main header's uint64 after the magic) whose layout and checksum
# this check was verified against, on every block of real warehouses: DuckDB 2.0's. A file
# of another version is left to DuckDB's own checks (a newer DuckDB may lay blocks out
# otherwise: better no check than good files refused); tests/warehouse/test_damage.py fails
# then, which is the signal to verify the new layout and add its version here
_CHECKED_STORAGE_VERSIONS = frozenset({999})


def _checksum_holds(page: bytes) -> bool:
    words = np.frombuffer(page, dtype="<u8", offset=8)
    with np.errstate(over="ignore"):  # the products wrap around, as uint64 does in C++
        computed = int(np.bitwise_xor.reduce(words * _CHECKSUM_FACTOR)) ^ _CHECKSUM_SEED
    return computed == struct.unpack_from("<Q", page)[0]


def block_damage(path: Path) -> str | None:
    """What fails its checksum in the DuckDB file at ``path`` (header or block, and where),
    or None if every header and block on disk holds. A file that is not a DuckDB database at
    all is left to DuckDB, whose open says so."""
    with path.open("rb") as file:
        main = file.read(_HEADER_BYTES)
        if len(main) < _HEADER_BYTES or main[8:12] != _MAGIC:
            return None
        if struct.unpack_from("<Q", main, 12)[0] not in _CHECKED_STORAGE_VERSIONS:
            return None
        if not _checksum_holds(main):
            return "its main header fails its checksum"
        headers = []
        for _ in range(2):
            page = file.read(_HEADER_BYTES)
            if len(page) == _HEADER_BYTES and _checksum_holds(page):
                # iteration, meta block, free list, block count, block size
                headers.append(struct.unpack_from("<QqqQQ", page, 8))
        if not headers:
            return "both database headers fail their checksums"
        *_, block_count, block_size = max(headers)
        if block_size < _HEADER_BYTES or block_size % 8:
            return f"its header names an impossible block size ({block_size} bytes)"
        for block in range(block_count):
            offset = 3 * _HEADER_BYTES + block * block_size
            page = file.read(block_size)
            if not page:  # the last blocks were free and cut off the file: nothing to read
                return None
            if len(page) < block_size:
                return f"block {block} at byte {offset} is cut short"
            if not _checksum_holds(page):
                return f"block {block} at byte {offset} fails its checksum"
    return None


def refuse_damaged(path: Path, named: Path | None = None) -> None:
    """Raise WarehouseError if a header or block of ``path`` fails its checksum; the message
    names ``named`` (the published file a staging copy was made from) if given."""
    why = block_damage(path)
    if why is not None:
        raise damaged_file(named or path, why)


def read_every_row(con: duckdb.DuckDBPyConnection) -> None:
    """Read every column of every table, so DuckDB decodes (and checksums) their data."""
    tables = con.execute(
        "select schema_name, table_name from duckdb_tables() where not temporary"
    ).fetchall()
    for schema, table in tables:
        relation = ".".join('"' + name.replace('"', '""') + '"' for name in (schema, table))
        con.execute(f"select bit_xor(hash(t)) from {relation} as t").fetchall()


# a read retries its open while publishes rename new snapshots over the path (_file_id)
_OPEN_TRIES = 3


def _open_read_only(path: Path) -> duckdb.DuckDBPyConnection:
    if not path.exists():
        raise WarehouseMissingError(
            f"no warehouse at {path}: build it with `fabricscope init` (or `make app`)"
        )
    refuse_stray_wal(path)
    for attempt in range(_OPEN_TRIES):
        before = _file_id(path)
        try:
            con = duckdb.connect(str(path), read_only=True)
            break
        except duckdb.Error as exc:
            # a writer renamed a new snapshot over the path while DuckDB was opening it
            # (it reads the file through more than one handle): open the new one
            if attempt + 1 < _OPEN_TRIES and _file_id(path) != before:
                continue
            raise damaged(path, exc) or WarehouseError(
                f"cannot open the warehouse {path} read-only: {exc}"
            ) from exc
    con.execute("set TimeZone = 'UTC'")
    return con


def _file_id(path: Path) -> tuple[int, int] | None:
    """Which file the path names now (device, inode): a publish renames a new one over it."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _snapshot_info(con: duckdb.DuckDBPyConnection) -> SnapshotInfo:
    row = con.execute(
        "select snapshot_id, published_at, snapshot_hash from snapshots "
        "order by snapshot_id desc limit 1"
    ).fetchone()
    if row is None:
        raise WarehouseError("the warehouse has no published snapshot; run `fabricscope init`")
    return SnapshotInfo(int(row[0]), row[1], str(row[2]))


@contextmanager
def read_connection(
    path: Path,
) -> Iterator[tuple[duckdb.DuckDBPyConnection, SnapshotInfo]]:
    """A read-only connection to the published snapshot and which snapshot it is. A read that
    finds the file damaged raises WarehouseError saying so."""
    con = _open_read_only(path)
    try:
        yield con, _snapshot_info(con)
    except duckdb.Error as exc:  # an IOException, or a FatalException for a bad checksum
        found = damaged(path, exc)
        if found is None:
            raise
        raise found from exc
    finally:
        con.close()


def read_frame(
    path: Path, sql: str, params: Sequence[Any] | None = None
) -> tuple[SnapshotInfo, pd.DataFrame]:
    """Run one of our own (trusted, parameterised) queries; user SQL goes through query.py."""
    with read_connection(path) as (con, snapshot):
        return snapshot, con.execute(sql, params or []).df()


def read_frames(
    path: Path, queries: dict[str, str]
) -> tuple[SnapshotInfo, dict[str, pd.DataFrame]]:
    """Several of our own queries from one connection, hence one snapshot."""
    with read_connection(path) as (con, snapshot):
        return snapshot, {name: con.execute(sql).df() for name, sql in queries.items()}


def current_snapshot(path: Path) -> SnapshotInfo | None:
    if not path.exists():
        return None
    with read_connection(path) as (_, snapshot):
        return snapshot


# Relations that people and the app read; exports and the status page list them.
PUBLISHED_RELATIONS: frozenset[str] = frozenset(
    {
        "offers_current",
        "fabric_current",
        "instance_catalog",
        "price_history_daily",
        "source_freshness",
        "offers_history",
        "fabric_history",
        "quarantined_items",
        "scrape_runs",
        "snapshots",
        "gpus",
        "gpu_aliases",
        "fabric_classes",
        "providers",
        "fx_rates",
        "calibration_current",
        "estimates",
        "estimates_current",
        "estimate_rankings",
        "estimate_exclusions",
        "serving_estimates",
        "serving_estimates_current",
    }
)


# -------------------------------------------------------------------------- hashing


def _rows_hash(
    con: duckdb.DuckDBPyConnection, relation: str, where: str = "true", params: Sequence[Any] = ()
) -> str:
    """sha256 over a relation's rows, independent of their physical order."""
    row = con.execute(
        f"""
        select sha256(coalesce(string_agg(h, '' order by h), ''))
        from (select md5(cast(t as varchar)) as h from {relation} as t where {where})
        """,
        list(params),
    ).fetchone()
    assert row is not None
    return str(row[0])


def run_content_hash(con: duckdb.DuckDBPyConnection, run_id: str) -> str:
    """What one run published: its offers and its fabric facts."""
    offers = _rows_hash(con, "offers_history", "run_id = ?", [run_id])
    fabric = _rows_hash(con, "fabric_history", "run_id = ?", [run_id])
    return hashlib.sha256(f"offers:{offers}\nfabric:{fabric}".encode()).hexdigest()


REFERENCE_TABLES: tuple[str, ...] = (
    "gpus",
    "fabric_classes",
    "providers",
    "fx_rates",
    "instance_gpus",
    "fabric_product_lines",
    "gemm_ceilings",
    "provider_costs",
)


def reference_content_hash(con: duckdb.DuckDBPyConnection) -> str:
    parts = [f"{table}:{_rows_hash(con, table)}" for table in REFERENCE_TABLES]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _combine(run_hashes: Sequence[tuple[str, str]], reference_hash: str) -> str:
    lines = [f"{run_id}:{content}" for run_id, content in sorted(run_hashes)]
    lines.append(f"reference:{reference_hash}")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _recorded_snapshot_hash(con: duckdb.DuckDBPyConnection) -> str:
    """The snapshot hash from the recorded per-run hashes (cheap: no row scans)."""
    runs = con.execute(
        "select run_id, content_hash from scrape_runs where status = 'ok'"
    ).fetchall()
    return _combine([(str(r), str(h)) for r, h in runs], reference_content_hash(con))


@dataclass(frozen=True)
class VerifyReport:
    snapshot: SnapshotInfo
    recomputed_hash: str
    mismatched_runs: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatched_runs and self.recomputed_hash == self.snapshot.snapshot_hash


def verify(path: Path) -> VerifyReport:
    """Check every block's checksum and read every row, then recompute every ok run's hash
    from its rows and the snapshot hash from those. Raises WarehouseError if the file is
    damaged."""
    refuse_damaged(path)
    with read_connection(path) as (con, snapshot):
        read_every_row(con)
        recorded = con.execute(
            "select run_id, content_hash from scrape_runs where status = 'ok' order by run_id"
        ).fetchall()
        recomputed = [(str(run_id), run_content_hash(con, str(run_id))) for run_id, _ in recorded]
        mismatched = tuple(
            run_id
            for (run_id, stored), (_, fresh) in zip(recorded, recomputed, strict=True)
            if stored != fresh
        )
        return VerifyReport(snapshot, _combine(recomputed, reference_content_hash(con)), mismatched)


# ------------------------------------------------------------------------- writing


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink_with_wal(path: Path) -> None:
    for candidate in (path, wal_of(path)):
        with suppress(FileNotFoundError):
            candidate.unlink()


@dataclass
class PublishResult:
    snapshot: SnapshotInfo | None
    notes: list[str] = field(default_factory=list)


class SnapshotWriter:
    """Build the next snapshot in a staging file and publish it atomically.

    Use as a context manager; change ``writer.con``; call ``writer.publish(...)``.
    Leaving the block without publishing (or with an exception) discards the
    staging file and leaves the published snapshot untouched.
    """

    def __init__(
        self, published: Path, on_stage: StageHook | None = None, lock_wait_s: float = 0.0
    ) -> None:
        self.paths = WarehousePaths(published)
        self._lock_wait_s = lock_wait_s
        self._on_stage = on_stage or (lambda _stage: None)
        self._lock_fd: int | None = None
        self._staging: Path | None = None
        self.con: duckdb.DuckDBPyConnection | None = None
        self.notes: list[str] = []
        self.is_new = False

    # ---- lock
    def _acquire_lock(self) -> None:
        self.paths.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self._lock_wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise WarehouseBusyError(
                    f"another refresh is running on {self.paths.published} ({holder}); "
                    "wait for it to finish and try again"
                ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {utc_now():%Y-%m-%d %H:%M:%S} UTC".encode(), 0)
        self._lock_fd = fd

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            with suppress(OSError):
                os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    # ---- recovery
    def _clean_orphans(self) -> None:
        for orphan in self.paths.orphaned_staging():
            orphan.unlink(missing_ok=True)
            self.notes.append(f"removed orphaned staging file {orphan.name}")

    def _set_aside_published_wal(self) -> Path | None:
        """A published file should never have a WAL; if one appeared, keep it aside.

        A stale WAL beside the published file would be replayed onto the next snapshot,
        so it is renamed (never deleted) before anything else happens.
        """
        if not self.paths.wal.exists():
            return None
        aside = self.paths.wal.with_name(f"{self.paths.wal.name}.aside-{utc_now():%Y%m%dT%H%M%S%f}")
        self.paths.wal.rename(aside)
        return aside

    def _copy_published(self, staging: Path, wal_aside: Path | None) -> None:
        shutil.copyfile(self.paths.published, staging)
        # before DuckDB reads or writes a block of it: a damaged block would be a
        # FatalException mid-write, or copied silently into every later snapshot
        refuse_damaged(staging, self.paths.published)
        if wal_aside is None:
            return
        shutil.copyfile(wal_aside, wal_of(staging))
        try:
            duckdb.connect(str(staging)).close()  # replays the WAL into the copy
            self.notes.append(
                "replayed a WAL found beside the published file; "
                f"kept the original as {wal_aside.name}"
            )
        except duckdb.Error as exc:
            _unlink_with_wal(staging)
            shutil.copyfile(self.paths.published, staging)
            self.notes.append(
                f"a WAL beside the published file would not replay ({exc}); "
                f"renamed it to {wal_aside.name} and built on the last checkpoint"
            )
        log.warning(self.notes[-1])

    # ---- context
    def __enter__(self) -> SnapshotWriter:
        self._acquire_lock()
        try:
            self._clean_orphans()
            wal_aside = self._set_aside_published_wal()
            self._staging = self.paths.staging(f"{os.getpid()}-{time.time_ns()}")
            if self.paths.published.exists():
                self._copy_published(self._staging, wal_aside)
            else:
                self.is_new = True
            self._on_stage("copied")
            try:
                self.con = duckdb.connect(str(self._staging))
            except duckdb.Error as exc:  # the copy of the published file is no database
                raise damaged(self.paths.published, exc) or WarehouseError(
                    f"the warehouse {self.paths.published} cannot be opened: {first_line(exc)}"
                ) from None
            self.con.execute("set TimeZone = 'UTC'")
            apply_migrations(self.con, self.notes)
        except duckdb.Error as exc:  # read through the copy: the file itself may be damaged
            self._discard()
            found = damaged(self.paths.published, exc)
            if found is None:
                raise
            raise found from exc
        except BaseException:
            self._discard()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        self._discard()
        if isinstance(exc, duckdb.Error):
            found = damaged(self.paths.published, exc)
            if found is not None:
                raise found from exc

    def _discard(self) -> None:
        if self.con is not None:
            with suppress(duckdb.Error):
                self.con.close()
            self.con = None
        if self._staging is not None:
            _unlink_with_wal(self._staging)
            self._staging = None
        self._release_lock()

    # ---- publish
    def publish(
        self, kind: str, run_id: str | None = None, note: str | None = None
    ) -> SnapshotInfo:
        """Record the snapshot, test it, and swap it in. Raises DataTestFailure."""
        con, staging = self.con, self._staging
        assert con is not None and staging is not None, "publish() outside the with-block"
        apply_views(con)
        if kind == "run" and run_id is not None:
            _scope_checks_to_run(con, run_id)
        failures = run_data_tests(con)
        con.execute("drop view if exists temp.checked_offers")
        con.execute("drop view if exists temp.checked_fabric")
        if failures:
            raise DataTestFailure(failures)
        self._on_stage("tested")
        previous = con.execute("select coalesce(max(snapshot_id), 0) from snapshots").fetchone()
        assert previous is not None
        info = SnapshotInfo(int(previous[0]) + 1, utc_now(), _recorded_snapshot_hash(con))
        con.execute(
            "insert into snapshots values (?, ?, ?, ?, ?, ?)",
            [info.snapshot_id, info.published_at, kind, run_id, info.snapshot_hash, note],
        )
        con.execute("checkpoint")
        self._on_stage("checkpointed")
        con.close()
        self.con = None
        if wal_of(staging).exists():  # nothing should remain after CHECKPOINT and close
            raise WarehouseError(f"staging file {staging.name} kept a WAL after CHECKPOINT")
        _fsync(staging)
        self._on_stage("before_rename")
        os.replace(staging, self.paths.published)
        self._staging = None
        _fsync(self.paths.directory)
        self._on_stage("renamed")
        return info

    @property
    def next_snapshot_id(self) -> int:
        assert self.con is not None
        # fetchall, not fetchone: an unfinished result would block register() afterwards
        rows = self.con.execute("select coalesce(max(snapshot_id), 0) + 1 from snapshots")
        return int(rows.fetchall()[0][0])


# ----------------------------------------------------------------- schema and tests


def apply_migrations(con: duckdb.DuckDBPyConnection, notes: list[str] | None = None) -> list[str]:
    """Apply numbered migrations not yet recorded; refuse edited ones."""
    con.execute(
        "create table if not exists schema_migrations ("
        " version varchar primary key, sha256 varchar not null, applied_at timestamptz not null)"
    )
    applied = dict(con.execute("select version, sha256 from schema_migrations").fetchall())
    done: list[str] = []
    for migration in _sql_files(MIGRATIONS_DIR):
        text = migration.read_text()
        digest = hashlib.sha256(text.encode()).hexdigest()
        if migration.stem in applied:
            if applied[migration.stem] != digest:
                raise WarehouseError(
                    f"migration {migration.name} changed after it was applied; "
                    "add a new numbered migration instead of editing a released one"
                )
            continue
        con.execute("begin")
        con.execute(text)
        con.execute(
            "insert into schema_migrations values (?, ?, ?)", [migration.stem, digest, utc_now()]
        )
        con.execute("commit")
        done.append(migration.stem)
    if done and notes is not None:
        notes.append(f"applied migrations {', '.join(done)}")
    return done


def apply_views(con: duckdb.DuckDBPyConnection) -> None:
    for view_file in _sql_files(VIEWS_DIR):
        con.execute(view_file.read_text())


def _scope_checks_to_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """Shadow the checked_* views with this run's rows (temporary views win by name)."""
    literal = run_id.replace("'", "''")  # DDL takes no parameters; quote the id as a literal
    for view, table in (("checked_offers", "offers_history"), ("checked_fabric", "fabric_history")):
        con.execute(
            f"create or replace temp view {view} as "
            f"select * from main.{table} where run_id = '{literal}'"
        )


def data_test_files() -> list[Path]:
    return sorted(DATA_TESTS_DIR.glob("assert_*.sql"))


def run_data_tests(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Each test returns offending rows; the result maps failing tests to row counts."""
    failures: dict[str, int] = {}
    for test in data_test_files():
        body = test.read_text().strip().rstrip(";")
        row = con.execute(f"select count(*) from ({body})").fetchone()
        assert row is not None
        if row[0]:
            failures[test.stem] = int(row[0])
    return failures
