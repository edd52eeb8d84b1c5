"""The scheduler's decisions on a fake clock, in this process: which sources are due at start
(one catch-up however long the downtime), backoff after failures in a row, no two runs of a
source at once, and the jobs the service's scheduler gets. No real cron is waited on: the
clock is moved by the test, and the crawl subprocess (tested as a process in
tests/ops/test_schedule.py and tests/scrapers/) is replaced by scripted outcomes.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.events import EVENT_SCHEDULER_STARTED
from apscheduler.job import Job
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from fabricscope.config import ScheduleSettings, Settings
from fabricscope.ops.refresh import SourceOutcome
from fabricscope.ops.schedule import Runner, SourceJob, build_scheduler, due, plan
from fabricscope.warehouse.load import RunBatch, RunRecord, new_run_id, publish_run
from fabricscope.warehouse.models import RunMode, RunStatus
from fabricscope.warehouse.synthetic import synthetic_offers

SOURCE = "skypilot_hyperbolic"
MONDAY = datetime(2026, 3, 2, tzinfo=UTC)  # the fake clock's day: a Monday
NOW = MONDAY.replace(hour=10, minute=20)
CRAWL = timedelta(seconds=30)  # how long a scripted crawl takes on the fake clock


class FakeClock:
    """The time the scheduler's decisions read; the test sets or moves it."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, by: timedelta) -> None:
        self.now += by


class ScriptedCrawls(Runner):
    """The real Runner, with the crawl subprocess replaced by an outcome the test scripts
    (``status``). A crawl takes ``CRAWL`` on the fake clock; a crawl of a source in ``hold``
    waits for ``release``, so a test decides when it ends."""

    def __init__(self, settings: Settings, clock: FakeClock) -> None:
        super().__init__(settings, offline=True, clock=clock)
        self.fake_clock = clock
        self.status = RunStatus.OK
        self.crawled: list[tuple[str, datetime]] = []
        self.hold: set[str] = set()
        self.entered = threading.Event()
        self.release = threading.Event()

    def _crawl(self, job: SourceJob) -> SourceOutcome:
        self.crawled.append((job.source, self.clock()))
        self.entered.set()
        if job.source in self.hold:
            assert self.release.wait(timeout=30), "the test never released the crawl"
        self.fake_clock.advance(CRAWL)
        ok = self.status is RunStatus.OK
        return SourceOutcome(
            job.source,
            status=self.status.value,
            error=None if ok else "HTTP 503 from the provider",
            offers=4 if ok else 0,
        )


@pytest.fixture(autouse=True)
def no_outside_configuration(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Settings come from the test alone: no FABRICSCOPE_* variable, no fabricscope.toml."""
    for name in list(os.environ):
        if name.startswith("FABRICSCOPE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.INFO, logger="fabricscope.schedule")
    yield caplog


def settings_for(warehouse: Path, **schedule: Any) -> Settings:
    return Settings(
        warehouse=warehouse,
        data_dir=warehouse.parent,
        schedule=ScheduleSettings(**{"jitter_s": 0, **schedule}),
    )


def source_job(cron: str, source: str = SOURCE) -> SourceJob:
    return SourceJob(source=source, cron=cron, jitter_s=0, timeout_s=60)


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return MONDAY.replace(hour=hour, minute=minute, second=second)


# ---- the period of a cron


@pytest.mark.parametrize(
    ("cron", "seconds"),
    [
        ("0 * * * *", 3600),  # hourly
        ("17 */6 * * *", 6 * 3600),  # every 6 h
        ("*/15 * * * *", 900),  # 5 fields
        ("45 4 * * *", 86400),  # daily (the export's default)
        ("*/4 * * * * *", 4),  # 6 fields: seconds first
        ("30 * * * * *", 60),  # 6 fields, once a minute
    ],
)
def test_the_period_of_a_regular_cron_is_the_same_at_any_time(cron: str, seconds: float) -> None:
    job = source_job(cron)
    for now in (MONDAY, NOW, NOW + timedelta(days=3, hours=7, seconds=11)):
        assert job.period_s(now) == seconds, now


def test_the_period_of_an_irregular_cron_is_its_next_gap_from_the_given_time() -> None:
    weekdays = source_job("0 9 * * mon-fri")
    friday = MONDAY + timedelta(days=4)
    assert weekdays.period_s(friday.replace(hour=8)) == 3 * 86400  # Friday 9:00 -> Monday
    assert weekdays.period_s(friday.replace(hour=10)) == 86400  # Monday -> Tuesday
    assert weekdays.period_s(friday.replace(hour=8)) == 3 * 86400  # asked again: the same


# ---- due at start: a catch-up run


def test_a_source_that_never_ran_is_due() -> None:
    job = source_job("0 * * * *")
    assert due([job], {SOURCE: None}, NOW) == [job]
    assert due([job], {}, NOW) == [job]


@pytest.mark.parametrize("missed", [1, 3, 30])
def test_a_source_down_across_its_fires_is_due_once_with_one_catch_up_job(
    tmp_path: Path, missed: int
) -> None:
    hourly = source_job("0 * * * *")
    # the previous fire was 10:00; a run just before the missed-th fire back missed them all
    last = at(10) - timedelta(hours=missed - 1, minutes=5)
    assert due([hourly], {SOURCE: last}, NOW) == [hourly]
    runner = Runner(settings_for(tmp_path / "warehouse.duckdb"), offline=True, clock=FakeClock(NOW))
    scheduler = build_scheduler(runner, [hourly], {SOURCE: last}, NOW)
    catch_ups = [job for job in scheduler.get_jobs() if job.id.startswith("catch-up:")]
    assert [job.id for job in catch_ups] == [f"catch-up:{SOURCE}"]
    assert catch_ups[0].args == (hourly, "catch-up")
    assert next_fire(catch_ups[0], NOW) == NOW  # at once


def test_a_source_that_ran_since_its_previous_fire_is_not_due() -> None:
    hourly = source_job("0 * * * *")
    assert due([hourly], {SOURCE: at(10, 5)}, NOW) == []
    assert due([hourly], {SOURCE: at(10)}, NOW) == []  # ran at the fire itself
    assert due([hourly], {SOURCE: at(9, 59, 59)}, NOW) == [hourly]


def test_due_reads_each_source_on_its_own_cron() -> None:
    every_4_s = source_job("*/4 * * * * *", "voltage_park")
    daily = source_job("30 2 * * *", "lambda_cloud")
    hourly = source_job("0 * * * *")
    last_runs = {
        "voltage_park": NOW - timedelta(seconds=5),  # before 10:20:00: missed one fire
        "lambda_cloud": at(2, 31),  # after today's 2:30
        SOURCE: at(9, 30),  # before 10:00
    }
    assert due([every_4_s, daily, hourly], last_runs, NOW) == [every_4_s, hourly]
    later = {**last_runs, "voltage_park": NOW}
    assert due([every_4_s, daily, hourly], later, NOW + timedelta(seconds=3)) == [hourly]


# ---- backoff after failures in a row


def test_failures_in_a_row_skip_the_fires_inside_the_backoff_window(
    warehouse_path: Path, logged: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock(at(10))
    runner = ScriptedCrawls(settings_for(warehouse_path), clock)
    hourly = source_job("0 * * * *")

    def fire(hour: int) -> SourceOutcome | None:
        clock.now = at(hour)
        return runner.run_source(hourly)

    runner.status = RunStatus.FAILED
    assert fire(10) is not None  # 1 in a row: period x (2^0 - 1) = no wait
    assert runner.not_before[SOURCE] == at(10) + CRAWL
    assert fire(11) is not None  # 2 in a row: wait one period from its end
    assert runner.failures[SOURCE] == 2
    assert runner.not_before[SOURCE] == at(12) + CRAWL
    logged.clear()
    assert fire(12) is None
    assert logged.messages == [
        f"{SOURCE}: backing off after 2 failures in a row; next try after 2026-03-02T12:00:30+00:00"
    ]
    assert fire(13) is not None  # 3 in a row: wait three periods
    assert runner.not_before[SOURCE] == at(16) + CRAWL
    assert [fire(hour) for hour in (14, 15, 16)] == [None, None, None]
    runner.status = RunStatus.OK
    assert fire(17) is not None
    assert SOURCE not in runner.failures and SOURCE not in runner.not_before  # cleared
    assert fire(18) is not None
    assert [when for _, when in runner.crawled] == [at(h) for h in (10, 11, 13, 17, 18)]
    errors = [r.getMessage() for r in logged.records if r.levelno == logging.ERROR]
    assert errors[-1] == f"{SOURCE}: failed (3 in a row): HTTP 503 from the provider"


def test_the_backoff_is_capped_and_holds_back_scheduled_fires_only(
    warehouse_path: Path,
) -> None:
    clock = FakeClock(at(10))
    runner = ScriptedCrawls(settings_for(warehouse_path, backoff_max_s=5400), clock)
    hourly = source_job("0 * * * *")
    runner.status = RunStatus.FAILED
    for _ in range(3):
        # a catch-up (or --once) run is not held back by the window
        assert runner.run_source(hourly, "catch-up") is not None
    # three periods would be 3 h; the cap is 1.5 h from the last failure's end
    assert runner.not_before[SOURCE] == clock.now + timedelta(seconds=5400)
    clock.now = runner.not_before[SOURCE] - timedelta(seconds=1)
    assert runner.run_source(hourly) is None
    clock.now = runner.not_before[SOURCE]
    assert runner.run_source(hourly) is not None


def publish_at(path: Path, finished_at: datetime, status: RunStatus) -> None:
    """One run of SOURCE that finished at ``finished_at`` (with offers when ok)."""
    run = RunRecord(
        run_id=new_run_id(SOURCE),
        source=SOURCE,
        mode=RunMode.REPLAY,
        started_at=finished_at - timedelta(minutes=1),
        finished_at=finished_at,
        status=status,
        items_scraped=3 if status is RunStatus.OK else 0,
        error_text=None if status is RunStatus.OK else "HTTP 503 from the provider",
    )
    offers = (
        synthetic_offers(3, source=SOURCE, observed_at=finished_at)
        if status is RunStatus.OK
        else None
    )
    publish_run(path, RunBatch(run, offers))


def test_load_state_restores_the_failures_in_a_row_and_the_last_runs(
    warehouse_path: Path,
) -> None:
    publish_at(warehouse_path, at(5), RunStatus.OK)
    for hour in (6, 7, 8):
        publish_at(warehouse_path, at(hour, 1), RunStatus.FAILED)
    clock = FakeClock(NOW)
    runner = ScriptedCrawls(settings_for(warehouse_path), clock)
    hourly = source_job("0 * * * *")
    other = source_job("0 * * * *", "voltage_park")
    last_runs = runner.load_state([hourly, other])
    assert last_runs == {SOURCE: at(8, 1), "voltage_park": None}
    assert runner.failures == {SOURCE: 3}
    assert runner.not_before == {SOURCE: NOW + timedelta(hours=3)}  # 3 periods from start
    clock.now = at(13)
    assert runner.run_source(hourly) is None  # still inside the window
    clock.now = at(14)
    assert runner.run_source(hourly) is not None
    assert due([hourly, other], last_runs, NOW) == [hourly, other]


# ---- one run of a source at a time


def test_a_fire_while_the_previous_run_is_still_going_is_skipped(
    warehouse_path: Path, logged: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock(at(10))
    runner = ScriptedCrawls(settings_for(warehouse_path), clock)
    hourly = source_job("0 * * * *")
    runner.hold.add(SOURCE)
    outcomes: list[SourceOutcome | None] = []
    first = threading.Thread(target=lambda: outcomes.append(runner.run_source(hourly)))
    first.start()
    try:
        assert runner.entered.wait(timeout=10), "the first crawl never started"
        logged.clear()
        assert runner.run_source(hourly) is None  # the next fire meets the running crawl
        assert runner.run_source(hourly, "catch-up") is None
        assert logged.messages == [
            f"{SOURCE}: skipped (scheduled): the previous run is still going",
            f"{SOURCE}: skipped (catch-up): the previous run is still going",
        ]
        # another source is not held up by it
        assert runner.run_source(source_job("0 * * * *", "voltage_park")) is not None
    finally:
        runner.release.set()
        first.join(timeout=10)
    assert not first.is_alive() and outcomes[0] is not None and outcomes[0].ok
    assert runner.run_source(hourly) is not None  # the first has finished: runs again
    assert [source for source, _ in runner.crawled] == [SOURCE, "voltage_park", SOURCE]


# ---- the service's scheduler


def next_fire(job: Job, now: datetime) -> datetime | None:
    return job.trigger.get_next_fire_time(None, now)


@contextmanager
def started_paused(scheduler: BlockingScheduler) -> Iterator[list[Job]]:
    """The scheduler started paused (it runs nothing) in a thread: its jobs as it holds them
    once started, with the job defaults applied; shut down on leaving."""
    running = threading.Event()
    scheduler.add_listener(lambda _event: running.set(), EVENT_SCHEDULER_STARTED)
    thread = threading.Thread(target=scheduler.start, kwargs={"paused": True}, daemon=True)
    thread.start()
    try:
        assert running.wait(timeout=10), "the scheduler never started"
        yield scheduler.get_jobs()
    finally:
        scheduler.shutdown(wait=False)
        thread.join(timeout=10)
    assert not thread.is_alive()


def service(warehouse: Path, **schedule: Any) -> tuple[ScriptedCrawls, dict[str, SourceJob]]:
    """A runner and the jobs ``plan`` makes of three sources' spider crons and ``schedule``,
    by source."""
    settings = settings_for(
        warehouse,
        **{
            "jitter_s": 120,
            "misfire_grace_s": 900,
            "estimates_delay_s": 60,
            "sources": {
                "voltage_park": {"cron": "0 */6 * * *", "jitter_s": 0},
                "lambda_cloud": {"enabled": False},
            },
            **schedule,
        },
    )
    known = {SOURCE: "0 * * * *", "voltage_park": "30 2 * * *", "lambda_cloud": "5 * * * *"}
    jobs = plan(settings, known)
    return ScriptedCrawls(settings, FakeClock(NOW)), {job.source: job for job in jobs}


def test_the_scheduler_has_a_job_per_source_and_a_catch_up_per_due_source(
    tmp_path: Path,
) -> None:
    runner, jobs = service(tmp_path / "warehouse.duckdb")
    # voltage_park never ran (due); skypilot_hyperbolic ran since its 10:00 fire (not due)
    last_runs = {SOURCE: at(10, 5), "voltage_park": None}
    scheduler = build_scheduler(runner, list(jobs.values()), last_runs, NOW)
    assert isinstance(scheduler, BlockingScheduler) and not scheduler.running
    assert scheduler.timezone == UTC
    by_id = {job.id: job for job in scheduler.get_jobs()}
    assert sorted(by_id) == [
        "catch-up:voltage_park",
        f"source:{SOURCE}",
        "source:voltage_park",
    ]  # lambda_cloud is disabled; no export without export_dir
    hourly, six_hourly = by_id[f"source:{SOURCE}"], by_id["source:voltage_park"]
    assert isinstance(hourly.trigger, CronTrigger) and hourly.trigger.jitter == 120
    assert isinstance(six_hourly.trigger, CronTrigger) and six_hourly.trigger.jitter is None
    assert next_fire(six_hourly, NOW) == at(12)
    first = next_fire(hourly, NOW)
    assert first is not None and at(11) <= first <= at(11, 2)  # jittered by up to 120 s
    assert hourly.name == SOURCE and hourly.args == (jobs[SOURCE],)
    catch_up = by_id["catch-up:voltage_park"]
    assert isinstance(catch_up.trigger, DateTrigger) and next_fire(catch_up, NOW) == NOW
    assert catch_up.name == "voltage_park (catch-up)" and catch_up.args == (
        jobs["voltage_park"],
        "catch-up",
    )
    with started_paused(scheduler) as held:
        for job in held:
            assert job.func == runner.run_source
            assert (job.coalesce, job.max_instances, job.misfire_grace_time) == (True, 1, 900)
        assert sorted(job.id for job in held) == sorted(by_id)
    assert runner.crawled == []  # paused: nothing ran


def test_every_due_source_gets_its_own_catch_up(tmp_path: Path) -> None:
    runner, jobs = service(tmp_path / "warehouse.duckdb")
    last_runs = {SOURCE: at(8), "voltage_park": None}
    scheduler = build_scheduler(runner, list(jobs.values()), last_runs, NOW)
    catch_ups = sorted(job.id for job in scheduler.get_jobs() if job.id.startswith("catch-up:"))
    assert catch_ups == [f"catch-up:{SOURCE}", "catch-up:voltage_park"]


def test_the_export_job_exists_only_with_an_export_folder(tmp_path: Path) -> None:
    runner, jobs = service(
        tmp_path / "warehouse.duckdb", export_dir=tmp_path / "exports", export_cron="45 4 * * *"
    )
    scheduler = build_scheduler(
        runner, list(jobs.values()), {SOURCE: NOW, "voltage_park": NOW}, NOW
    )
    export = scheduler.get_job("export")
    assert export is not None and export.func == runner.export
    assert isinstance(export.trigger, CronTrigger)
    assert next_fire(export, NOW) == at(4, 45) + timedelta(days=1)
    assert sorted(job.id for job in scheduler.get_jobs()) == [
        "export",
        f"source:{SOURCE}",
        "source:voltage_park",
    ]  # both ran since their previous fire: no catch-up
    with started_paused(scheduler):
        held = scheduler.get_job("export")
        assert held is not None
        assert (held.coalesce, held.max_instances, held.misfire_grace_time) == (True, 1, 900)


def test_a_publish_schedules_the_estimates_after_their_delay(warehouse_path: Path) -> None:
    runner, jobs = service(warehouse_path)
    scheduler = build_scheduler(
        runner, list(jobs.values()), {SOURCE: NOW, "voltage_park": NOW}, NOW
    )
    assert scheduler.get_job("estimates") is None
    runner.status = RunStatus.FAILED
    assert runner.run_source(jobs[SOURCE], "catch-up") is not None
    assert scheduler.get_job("estimates") is None  # nothing published
    runner.status = RunStatus.OK
    assert runner.run_source(jobs[SOURCE], "catch-up") is not None  # ends at NOW + 2 crawls
    estimates = scheduler.get_job("estimates")
    assert estimates is not None and estimates.func == runner.estimates
    assert isinstance(estimates.trigger, DateTrigger)
    assert next_fire(estimates, NOW) == NOW + 2 * CRAWL + timedelta(seconds=60)
    assert runner.published.is_set()
