"""Building and refreshing the warehouse.

Crawls run in a separate process (`python -m fabricscope.scrapers.tools crawl`): Twisted's
reactor cannot restart, and a crawl must never take the caller down with it.
Each source publishes its own run; this module reads the crawl's JSON events.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabricscope.ops.locks import LockHeld, ProcessLock, refresh_lock_path
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import PublishResult, WarehouseError, read_frame
from fabricscope.warehouse.load import init_warehouse

_ROOT = Path(__file__).resolve().parents[2]


def ensure_warehouse(warehouse: Path) -> PublishResult:
    """Create or migrate the warehouse and load the bundled reference data.

    Idempotent: publishes a new snapshot only when the schema or the reference
    CSVs changed.
    """
    return init_warehouse(warehouse)


@dataclass
class SourceOutcome:
    source: str
    status: str = "running"
    error: str | None = None
    offers: int = 0
    facts: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    quarantined: int = 0
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class RefreshError(Exception):
    """The crawl process itself failed; the message says how."""


class RefreshBusy(RefreshError):
    """Another refresh (or the scheduler) is writing this warehouse; nothing was crawled."""


def _tools_environment() -> dict[str, str]:
    """This environment, with the repository first on the child's import path."""
    path = os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _tools(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m fabricscope.scrapers.tools <args>`` to completion, its output captured
    (Scrapy and Twisted stay out of the caller's process)."""
    return subprocess.run(
        [sys.executable, "-m", "fabricscope.scrapers.tools", *args],
        capture_output=True,
        text=True,
        cwd=_ROOT,
        check=False,
        env=_tools_environment(),
    )


def source_crons() -> dict[str, str]:
    """Every source and its spider's refresh_cron (the spiders are listed in a subprocess:
    importing them here would import Scrapy and Twisted into the caller)."""
    result = _tools("list", "--json")
    if result.returncode != 0:
        raise RefreshError(f"cannot list sources: {result.stderr.strip()[-500:]}")
    return {item["name"]: item["refresh_cron"] for item in json.loads(result.stdout)}


def list_sources() -> list[str]:
    return sorted(source_crons())


# the crawl child reads this and never outlives this process, however it dies: no spider
# opens after it, running ones stop (their runs recorded aborted), none is recorded ok, and
# the crawl exits (fabricscope/scrapers/tools.py, fabricscope/scrapers/extensions.py)
PARENT_PID_ENV = "FABRICSCOPE_CRAWL_PARENT_PID"


def _crawl_environment(warehouse: Path, data_dir: Path) -> dict[str, str]:
    return {
        **_tools_environment(),
        PARENT_PID_ENV: str(os.getpid()),
        "FABRICSCOPE_WAREHOUSE": str(warehouse.resolve()),
        "FABRICSCOPE_DATA_DIR": str(data_dir.resolve()),
    }


def start_crawl(
    warehouse: Path,
    data_dir: Path,
    sources: Sequence[str],
    *,
    offline: bool,
    log_name: str,
    extra_args: Sequence[str] = (),
    new_session: bool = False,
) -> tuple[subprocess.Popen[str], Path]:
    """Start ``fabricscope.scrapers.tools crawl`` for ``sources`` in its own process.

    Its JSON events come on the process's stdout; its log goes to
    ``data_dir/logs/<log_name>-<time>.log`` (returned). ``new_session``: its own process
    group, so a signal to the group reaches the whole crawl.
    """
    args = [sys.executable, "-m", "fabricscope.scrapers.tools", "crawl", *sources, *extra_args]
    if offline:
        args.append("--offline")
    log_dir = data_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{log_name}-{time.strftime('%Y%m%dT%H%M%S')}.log"
    with log_path.open("w", encoding="utf-8") as log:  # the child keeps its own copy
        process = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=_ROOT,
            env=_crawl_environment(warehouse, data_dir),
            start_new_session=new_session,
        )
    return process, log_path


def refresh(
    warehouse: Path,
    data_dir: Path,
    sources: Sequence[str],
    *,
    offline: bool,
    record: bool = False,
    on_event: Callable[[SourceOutcome], None] | None = None,
    extra_args: Sequence[str] = (),
    timeout_s: float | None = None,
) -> list[SourceOutcome]:
    """Crawl ``sources`` (all of them if empty); every source publishes its own run.

    ``timeout_s``: the crawl's hard wall-clock; past it the crawl is stopped (SIGTERM, then
    SIGKILL 10 s later) and every source it had not finished is recorded failed.

    One refresh at a time per warehouse: the refresh lock is held from before the crawl until
    it ends (RefreshBusy, at once, if another refresh or ``fabricscope schedule`` holds it)."""
    known = list_sources()
    chosen = list(sources) or known
    unknown = [s for s in chosen if s not in known]
    if unknown:
        raise RefreshError(
            f"unknown source {unknown[0]!r}; known sources: {', '.join(sorted(known))}"
        )
    try:
        with ProcessLock(refresh_lock_path(warehouse), "fabricscope refresh"):
            return _refresh_locked(
                warehouse, data_dir, chosen, offline, record, on_event, extra_args, timeout_s
            )
    except LockHeld as held:
        raise RefreshBusy(
            f"another refresh is running on {warehouse} ({held.holder}); nothing was crawled: "
            "wait for it to finish (or stop `fabricscope schedule`, which holds the lock while "
            "it runs)"
        ) from None


def _refresh_locked(
    warehouse: Path,
    data_dir: Path,
    chosen: list[str],
    offline: bool,
    record: bool,
    on_event: Callable[[SourceOutcome], None] | None,
    extra_args: Sequence[str],
    timeout_s: float | None,
) -> list[SourceOutcome]:
    ensure_warehouse(warehouse)
    outcomes = {source: SourceOutcome(source) for source in chosen}
    if on_event:
        for outcome in outcomes.values():  # each source is announced before the crawl starts
            on_event(outcome)
    process, log_path = start_crawl(
        warehouse,
        data_dir,
        chosen,
        offline=offline,
        log_name="refresh",
        extra_args=[*extra_args, *(["--record"] if record else [])],
        new_session=True,  # a signal to its group reaches the whole crawl
    )
    started_at = datetime.now(UTC)
    timed_out = threading.Event()
    watchdog = None
    if timeout_s is not None:
        watchdog = threading.Timer(timeout_s, _stop_crawl, (process, timed_out))
        watchdog.daemon = True
        watchdog.start()
    run_ids: dict[str, str] = {}
    assert process.stdout is not None
    try:
        for line in process.stdout:
            event = _event(line)
            if event is None or event.get("source") not in outcomes:
                continue
            outcome = outcomes[event["source"]]
            if event["event"] == "opened" and event.get("run_id"):
                run_ids[outcome.source] = str(event["run_id"])
            if event["event"] == "closed":
                _close(outcome, event)
            if on_event:
                on_event(outcome)
        code = process.wait()
    finally:
        if watchdog is not None:
            watchdog.cancel()
    unfinished = [o for o in outcomes.values() if o.status == "running"]
    for outcome in unfinished:
        outcome.status = "failed"
        outcome.error = (
            f"timed out after {timeout_s:g} s: the crawl was stopped; see {log_path}"
            if timed_out.is_set()
            else f"the crawl process ended (exit {code}) before this source finished; "
            f"see {log_path}"
        )
        outcome.seconds = time.monotonic() - outcome.started
        with contextlib.suppress(WarehouseError):  # the outcome still says it, on screen
            record_unfinished(
                warehouse, outcome, run_ids.get(outcome.source), started_at, offline, 30.0
            )
        if on_event:
            on_event(outcome)
    return list(outcomes.values())


def _stop_crawl(process: subprocess.Popen[str], timed_out: threading.Event) -> None:
    """The hard wall-clock: SIGTERM to the crawl's group, SIGKILL 10 s later if need be."""
    timed_out.set()
    for which, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 0.0)):
        if process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, which)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=grace or None)


def record_unfinished(
    warehouse: Path,
    outcome: SourceOutcome,
    run_id: str | None,
    started_at: datetime,
    offline: bool,
    lock_wait_s: float,
) -> None:
    """A run the crawl never recorded (killed, timed out, died) enters the ledger here with
    the outcome's status and error and no rows. Raises WarehouseError if it cannot."""
    from fabricscope.warehouse.load import RunBatch, RunRecord, new_run_id, publish_run
    from fabricscope.warehouse.models import RunMode, RunStatus

    record = RunRecord(
        run_id=run_id or new_run_id(outcome.source),
        source=outcome.source,
        mode=RunMode.REPLAY if offline else RunMode.LIVE,
        started_at=started_at,
        finished_at=datetime.now(UTC),
        status=RunStatus(outcome.status),
        error_text=outcome.error,
    )
    publish_run(warehouse, RunBatch(record, None), lock_wait_s=lock_wait_s)


def _event(line: str) -> dict[str, Any] | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "event" in event else None


def _close(outcome: SourceOutcome, event: dict[str, Any]) -> None:
    outcome.status = event["status"]
    outcome.error = event.get("error")
    outcome.offers = int(event.get("offers", 0))
    outcome.facts = int(event.get("facts", 0))
    outcome.dropped = dict(event.get("dropped", {}))
    outcome.quarantined = int(event.get("quarantined", 0))
    outcome.seconds = time.monotonic() - outcome.started


def has_good_runs(warehouse: Path) -> bool:
    if not warehouse.exists():
        return False
    _, frame = read_frame(warehouse, reads.sql("good_runs"))
    return bool(frame["n"].iloc[0])


def parse_saved(source: str, file: Path, url: str | None = None) -> dict[str, Any]:
    """What a source's spider and pipelines make of one saved response (nothing published).

    The spider sends its own first request (its method and body; a ``file://`` URL for a
    curated file) and ``file`` answers it. A relative ``file`` is the caller's, from the
    working directory (the crawl runs in the repository).
    """
    args = ["parse", source, str(file.resolve())]
    if url:
        args += ["--url", url]
    result = _tools(*args)
    if result.returncode != 0:
        raise RefreshError(
            result.stderr.strip().splitlines()[-1]
            if result.stderr.strip()
            else f"parse failed (exit {result.returncode})"
        )
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed
