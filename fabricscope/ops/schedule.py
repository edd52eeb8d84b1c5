"""``fabricscope schedule``: one APScheduler process that keeps every source fresh.

- One job per source, on its spider's ``refresh_cron`` (UTC) unless the configuration's
  ``schedule.sources.<name>`` overrides it, with jitter; ``max_instances=1``,
  ``coalesce=True`` and an explicit misfire grace, so a late or missed fire becomes one run.
- Each crawl runs in its own process (Twisted's reactor cannot restart) with a hard timeout.
  The outcome always reaches ``scrape_runs``: the crawl publishes ok/failed/aborted itself;
  when it is killed (timeout, or shutdown past the grace) this process records the run.
- After a publish, the preset rankings are recomputed once (``estimates``), debounced; a
  daily Parquet export runs if ``schedule.export_dir`` is set.
- A single-instance lock (``data_dir/scheduler.lock``): a second ``fabricscope schedule``
  exits at once. The scheduler also holds the warehouse's refresh lock for its life, so a
  manual ``fabricscope refresh`` of the same warehouse is refused while it runs (and a
  scheduler does not start while a refresh runs): one writer at a time, really.
- At start, a source whose last run is older than its cron's previous fire gets one
  catch-up run (the scheduler was down across one or more fires: exactly one run).
- Consecutive failures back off: after n failures in a row a source skips its fires for
  ``min(backoff_max_s, period x (2^(n-1) - 1))``.
- SIGTERM/SIGINT: stop taking jobs, let running crawls finish for ``shutdown_grace_s``, then
  stop them (SIGTERM, then SIGKILL), publish nothing partial, exit 0.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from apscheduler.events import (
    EVENT_JOB_MAX_INSTANCES,
    EVENT_JOB_MISSED,
    EVENT_SCHEDULER_STARTED,
    JobEvent,
    SchedulerEvent,
)
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers import SchedulerNotRunningError
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from fabricscope.config import Settings, SourceSchedule, cron_fields
from fabricscope.ops.locks import LockHeld, ProcessLock, refresh_lock_path
from fabricscope.ops.refresh import (
    RefreshError,
    SourceOutcome,
    _close,
    _event,
    ensure_warehouse,
    record_unfinished,
    source_crons,
    start_crawl,
)
from fabricscope.ops.status import freshness_report
from fabricscope.rank import materialised
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import WarehouseError, read_frame
from fabricscope.warehouse.export import export_parquet
from fabricscope.warehouse.models import RunStatus, utc_now

log = logging.getLogger("fabricscope.schedule")


class ScheduleError(Exception):
    """The scheduler cannot start; the message is one line a person can act on."""


class ScheduleBusy(ScheduleError):
    """Another scheduler, or a refresh of the same warehouse, is running: refused at once."""


# ---- configuration -> jobs


def trigger(cron: str, jitter_s: int | None = None) -> CronTrigger:
    return CronTrigger(timezone="UTC", jitter=jitter_s or None, **cron_fields(cron))


@dataclass(frozen=True)
class SourceJob:
    source: str
    cron: str
    jitter_s: int
    timeout_s: float
    start_url: str | None = None

    def period_s(self, now: datetime) -> float:
        """Seconds between the next two fires after ``now`` (jitter ignored); a cron whose
        gaps differ (weekdays only, say) has the period of the gap that comes next."""
        plain = trigger(self.cron)
        first = plain.get_next_fire_time(None, now)
        assert first is not None
        second = plain.get_next_fire_time(first, first + timedelta(microseconds=1))
        assert second is not None
        return (second - first).total_seconds()

    def previous_fire(self, now: datetime) -> datetime | None:
        """The last fire time at or before ``now`` (jitter ignored)."""
        plain = trigger(self.cron)
        start = now - timedelta(seconds=3 * self.period_s(now) + 1)
        fire = plain.get_next_fire_time(None, start)
        previous = None
        while fire is not None and fire <= now:
            previous = fire
            fire = plain.get_next_fire_time(fire, fire + timedelta(microseconds=1))
        return previous


def plan(settings: Settings, known: dict[str, str] | None = None) -> list[SourceJob]:
    """The jobs the configuration asks for; unknown sources and bad crons are refused."""
    config = settings.schedule
    if known is None:
        try:
            known = source_crons()
        except RefreshError as exc:
            raise ScheduleError(str(exc)) from None
    for name, given in (("sources", list(config.sources)), ("only", config.only or [])):
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ScheduleError(
                f"invalid setting schedule.{name}: unknown source {unknown[0]!r}; known "
                "sources: " + ", ".join(sorted(known))
            )
    jobs = []
    for source, spider_cron in sorted(known.items()):
        if config.only is not None and source not in config.only:
            continue
        own = config.sources.get(source, SourceSchedule())
        if not own.enabled:
            continue
        cron = own.cron or spider_cron
        try:
            cron_fields(cron)
        except ValueError as exc:
            raise ScheduleError(f"source {source}: {exc}") from None
        jobs.append(
            SourceJob(
                source=source,
                cron=cron,
                jitter_s=config.jitter_s if own.jitter_s is None else own.jitter_s,
                timeout_s=own.timeout_s or config.crawl_timeout_s,
                start_url=own.start_url,
            )
        )
    return jobs


# ---- the locks


@contextmanager
def _only_writer(settings: Settings) -> Iterator[None]:
    """One scheduler per data folder, and no manual refresh of its warehouse meanwhile:
    both locks for the scheduler's life, each refusal in one line."""
    try:
        with (
            ProcessLock(settings.data_dir / "scheduler.lock", "fabricscope schedule"),
            ProcessLock(refresh_lock_path(settings.warehouse), "fabricscope schedule"),
        ):
            yield
    except LockHeld as held:
        what = "fabricscope schedule" if held.path.name == "scheduler.lock" else "refresh"
        raise ScheduleBusy(
            f"another {what} is running ({held.holder}; lock {held.path}); only one may run"
        ) from None


# ---- running one crawl


@dataclass
class _Active:
    process: subprocess.Popen[str]
    outcome: SourceOutcome
    run_id: str | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class Runner:
    """Runs source jobs, estimates and exports; owns backoff state and shutdown.

    ``clock`` is the time its decisions read (backoff windows, the estimates' and the export's
    dates): the wall clock in the service, a fake one a test advances."""

    def __init__(
        self, settings: Settings, offline: bool, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.settings = settings
        self.offline = offline
        self.clock = clock
        self.stopping = threading.Event()
        self.published = threading.Event()  # some crawl published since the last estimates
        self._active: dict[str, _Active] = {}
        self._running: dict[str, threading.Lock] = {}
        self._state = threading.Lock()
        self.failures: dict[str, int] = {}
        self.not_before: dict[str, datetime] = {}
        self.on_publish: Callable[[], None] | None = None
        self.report_stale = True  # after each job (the service); --once reports at the end

    # -- state from the warehouse
    def load_state(self, jobs: Sequence[SourceJob]) -> dict[str, datetime | None]:
        """Consecutive failures per source (for backoff) and when each last ran."""
        last: dict[str, datetime | None] = {job.source: None for job in jobs}
        try:
            _, frame = read_frame(self.settings.warehouse, reads.sql("last_run_per_source"))
            _, fresh = read_frame(self.settings.warehouse, reads.sql("failures_per_source"))
        except WarehouseError:
            return last
        for row in frame.to_dict("records"):
            if row["source"] in last and row["last_run"] is not None:
                last[row["source"]] = row["last_run"].to_pydatetime()
        now = self.clock()
        by_period = {job.source: job.period_s(now) for job in jobs}
        for row in fresh.to_dict("records"):
            count = int(row["failures_since_last_good"] or 0)
            if row["source"] in by_period and count:
                self._set_backoff(row["source"], count, by_period[row["source"]], now)
        return last

    def _set_backoff(self, source: str, failures: int, period_s: float, now: datetime) -> None:
        self.failures[source] = failures
        delay = min(self.settings.schedule.backoff_max_s, period_s * (2 ** (failures - 1) - 1))
        self.not_before[source] = now + timedelta(seconds=delay)

    # -- one scheduled fire
    def run_source(self, job: SourceJob, reason: str = "scheduled") -> SourceOutcome | None:
        if self.stopping.is_set():
            return None
        now = self.clock()
        waiting = self.not_before.get(job.source)
        if reason == "scheduled" and waiting and now < waiting:
            log.warning(
                "%s: backing off after %d failures in a row; next try after %s",
                job.source,
                self.failures.get(job.source, 0),
                waiting.isoformat(timespec="seconds"),
            )
            return None
        with self._state:
            lock = self._running.setdefault(job.source, threading.Lock())
        if not lock.acquire(blocking=False):
            log.warning("%s: skipped (%s): the previous run is still going", job.source, reason)
            return None
        try:
            log.info("%s: crawl started (%s)", job.source, reason)
            outcome = self._crawl(job)
        finally:
            lock.release()
        self._after(job, outcome)
        return outcome

    def _after(self, job: SourceJob, outcome: SourceOutcome) -> None:
        if outcome.ok:
            self.failures.pop(job.source, None)
            self.not_before.pop(job.source, None)
            log.info(
                "%s: ok, %d offers, %d fabric facts in %.1f s",
                job.source,
                outcome.offers,
                outcome.facts,
                outcome.seconds,
            )
            self.published.set()
            if self.on_publish:
                self.on_publish()
        else:
            count = self.failures.get(job.source, 0) + 1
            now = self.clock()
            self._set_backoff(job.source, count, job.period_s(now), now)
            log.error("%s: %s (%d in a row): %s", job.source, outcome.status, count, outcome.error)
        if self.report_stale:
            self.log_stale()

    def log_stale(self) -> None:
        try:
            report = freshness_report(
                self.settings.warehouse,
                self.settings.stale_after_hours,
                self.settings.stale_thresholds,
            )
        except WarehouseError:
            return
        if report.stale_sources:
            log.warning(
                "stale sources (no good run within %g h): %s",
                self.settings.stale_after_hours,
                ", ".join(report.stale_sources),
            )

    def _crawl(self, job: SourceJob) -> SourceOutcome:
        outcome = SourceOutcome(job.source)
        process, log_path = start_crawl(
            self.settings.warehouse,
            self.settings.data_dir,
            [job.source],
            offline=self.offline,
            log_name=f"crawl-{job.source}",
            extra_args=["--start-url", f"{job.source}={job.start_url}"] if job.start_url else [],
            new_session=True,  # signals to its process group reach all of it
        )
        active = _Active(process, outcome)
        with self._state:
            self._active[job.source] = active
        reader = threading.Thread(target=self._read_events, args=(active,), daemon=True)
        reader.start()
        deadline = time.monotonic() + job.timeout_s
        killed: str | None = None
        while process.poll() is None:
            if time.monotonic() > deadline:
                self._signal(process, signal.SIGKILL)
                killed = f"timed out after {job.timeout_s:g} s and was killed"
                break
            time.sleep(0.1)
        process.wait()
        reader.join(timeout=5)
        with self._state:
            self._active.pop(job.source, None)
        if outcome.status == "running":  # the crawl never recorded its run: record it here
            aborted = self.stopping.is_set() and killed is None
            outcome.status = RunStatus.ABORTED.value if aborted else RunStatus.FAILED.value
            outcome.error = killed or (
                "stopped at shutdown before it finished"
                if aborted
                else f"the crawl process ended (exit {process.returncode}) without a result; "
                f"see {log_path}"
            )
            outcome.seconds = time.monotonic() - outcome.started
            self._record(job, active, outcome)
        return outcome

    def _read_events(self, active: _Active) -> None:
        stream = active.process.stdout
        assert stream is not None
        for line in stream:
            event = _event(line)
            if event is None or event.get("source") != active.outcome.source:
                continue
            if event["event"] == "opened":
                active.run_id = event.get("run_id")
            elif event["event"] == "closed":
                _close(active.outcome, event)

    def _record(self, job: SourceJob, active: _Active, outcome: SourceOutcome) -> None:
        try:
            record_unfinished(
                self.settings.warehouse,
                outcome,
                active.run_id,
                active.started_at,
                self.offline,
                self.settings.lock_wait_s,
            )
        except WarehouseError as exc:
            log.error("%s: could not record the %s run: %s", job.source, outcome.status, exc)

    @staticmethod
    def _signal(process: subprocess.Popen[str], which: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, which)

    # -- shutdown
    def stop_crawls(self, grace_s: float) -> None:
        """Let running crawls finish for ``grace_s``; then SIGTERM (the crawl records an
        aborted run), and SIGKILL after 10 s more (this process records it)."""
        deadline = time.monotonic() + grace_s
        while self._running_processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        running = self._running_processes()
        for process in running:
            self._signal(process, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while self._running_processes() and time.monotonic() < deadline:
            time.sleep(0.1)
        for process in self._running_processes():
            self._signal(process, signal.SIGKILL)

    def _running_processes(self) -> list[subprocess.Popen[str]]:
        with self._state:
            return [a.process for a in self._active.values() if a.process.poll() is None]

    def busy(self) -> bool:
        with self._state:
            return bool(self._active)

    # -- estimates and export
    def estimates(self) -> None:
        if self.stopping.is_set():
            return
        self.published.clear()
        try:
            count, info = materialised.materialise(
                self.settings.warehouse, self.settings.lock_wait_s
            )
        except (WarehouseError, ValueError) as exc:
            log.error("estimates not materialised: %s", exc)
            return
        if info is not None:
            log.info("estimates: %d ranked offers in snapshot %d", count, info.snapshot_id)

    def export(self) -> None:
        target = self.settings.schedule.export_dir
        if target is None or self.stopping.is_set():
            return
        folder = target / self.clock().strftime("%Y-%m-%d")
        try:
            result = export_parquet(self.settings.warehouse, folder, None)
        except (WarehouseError, OSError) as exc:
            log.error("export failed: %s", exc)
            return
        log.info("exported snapshot %d to %s", result.snapshot.snapshot_id, result.directory)


# ---- the service


def due(
    jobs: Sequence[SourceJob], last_runs: dict[str, datetime | None], now: datetime
) -> list[SourceJob]:
    """Jobs whose last run is older than their cron's previous fire at ``now`` (or that never
    ran): however many fires were missed, a job is due once."""
    chosen = []
    for job in jobs:
        previous = job.previous_fire(now)
        last = last_runs.get(job.source)
        if last is None or (previous is not None and last < previous):
            chosen.append(job)
    return chosen


def _configure_logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("fabricscope", "apscheduler"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(logging.INFO)
        logger.propagate = False


def run_once(settings: Settings, offline: bool) -> int:
    """Every due job once, then estimates (if something published) and the export."""
    _configure_logging()
    jobs = plan(settings)
    with _only_writer(settings):
        ensure_warehouse(settings.warehouse)
        runner = Runner(settings, offline)
        runner.report_stale = False
        chosen = due(jobs, runner.load_state(jobs), runner.clock())
        log.info("once: %d of %d sources due", len(chosen), len(jobs))
        outcomes = [runner.run_source(job, "once") for job in chosen]
        if runner.published.is_set():
            runner.estimates()
        runner.export()
        runner.log_stale()
    failed = [o for o in outcomes if o is not None and not o.ok]
    if failed and len(failed) == len(outcomes):
        return 1
    return 3 if failed else 0


def build_scheduler(
    runner: Runner, jobs: Sequence[SourceJob], last_runs: dict[str, datetime | None], now: datetime
) -> BlockingScheduler:
    """The service's scheduler, not started: a job per source on its cron, one catch-up run
    per source due at ``now``, the export if configured; each publish then schedules the
    estimates (``runner.on_publish``)."""
    config = runner.settings.schedule
    scheduler = BlockingScheduler(
        executors={"default": ThreadPoolExecutor(max_workers=config.workers)},
        job_defaults={
            "coalesce": True,
            "max_instances": 1,
            "misfire_grace_time": config.misfire_grace_s,
        },
        timezone=UTC,
    )

    def schedule_estimates() -> None:
        scheduler.add_job(
            runner.estimates,
            "date",
            run_date=runner.clock() + timedelta(seconds=config.estimates_delay_s),
            id="estimates",
            name="estimates",
            replace_existing=True,
        )

    runner.on_publish = schedule_estimates
    for job in jobs:
        scheduler.add_job(
            runner.run_source,
            trigger(job.cron, job.jitter_s),
            args=[job],
            id=f"source:{job.source}",
            name=job.source,
        )
    for job in due(jobs, last_runs, now):  # down across one or more fires: one catch-up run
        scheduler.add_job(
            runner.run_source,
            "date",
            run_date=now,
            args=[job, "catch-up"],
            id=f"catch-up:{job.source}",
            name=f"{job.source} (catch-up)",
        )
    if config.export_dir is not None:
        scheduler.add_job(runner.export, trigger(config.export_cron), id="export")

    def skipped(event: JobEvent) -> None:
        what = (
            "missed (late past the grace)"
            if event.code == EVENT_JOB_MISSED
            else ("skipped: the previous run is still going")
        )
        log.warning("%s: %s", event.job_id, what)

    scheduler.add_listener(skipped, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    return scheduler


def serve(settings: Settings, offline: bool) -> int:
    """The long-running service; returns the exit code (0 after SIGTERM/SIGINT)."""
    _configure_logging()
    config = settings.schedule
    jobs = plan(settings)
    # a SIGTERM before the scheduler's own handler is in place stops it cleanly too
    early_stop = threading.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda _signum, _frame: early_stop.set())
    with _only_writer(settings):
        ensure_warehouse(settings.warehouse)
        runner = Runner(settings, offline)
        last_runs = runner.load_state(jobs)
        scheduler = build_scheduler(runner, jobs, last_runs, runner.clock())

        def stop(signum: int, _frame: object) -> None:
            log.info(
                "%s: stopping (no new jobs; running crawls get %g s)",
                signal.Signals(signum).name,
                config.shutdown_grace_s,
            )
            runner.stopping.set()
            # not from the handler itself: the main loop may hold the scheduler's locks
            threading.Thread(target=shut_down, daemon=True).start()

        def shut_down() -> None:
            with contextlib.suppress(SchedulerNotRunningError):  # not started yet: see started
                scheduler.shutdown(wait=False)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        if early_stop.is_set():
            log.info("stopped before the first job")
            return 0

        def started(_event: SchedulerEvent) -> None:  # said once it runs, not before
            log.info(
                "scheduling %d sources (%s)%s",
                len(jobs),
                "replaying fixtures" if offline else "live",
                f"; export daily to {config.export_dir}" if config.export_dir else "",
            )
            # a signal between the handler's installation and here found nothing to shut
            # down; the scheduler runs by now, so a later signal's shutdown finds it running
            if runner.stopping.is_set():
                threading.Thread(target=shut_down, daemon=True).start()

        scheduler.add_listener(started, EVENT_SCHEDULER_STARTED)
        scheduler.start()  # returns after shutdown
        runner.stop_crawls(config.shutdown_grace_s)
        deadline = time.monotonic() + 15
        while runner.busy() and time.monotonic() < deadline:
            time.sleep(0.1)
    log.info("stopped")
    return 0
