"""`fabricscope schedule` as real processes, for what only a process shows: one instance
(the lock, and its release), graceful SIGTERM mid-crawl, a crawl killed at its timeout, a
failing source that keeps its last good data, estimates after a publish, refused bad config.

No test waits on a cron's repeated fires: a scheduler's crons here never fire while it runs
('0 0 1 1 *'), its work is the catch-up run it starts with, or `--once`. The scheduling
decisions (due, backoff, overlap, the jobs) are tested on a fake clock in
test_schedule_clock.py. Crawls replay fixtures/ or fetch from a local server on 127.0.0.1.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pandas as pd

from fabricscope.warehouse.db import current_snapshot, read_frame
from fabricscope.warehouse.load import init_warehouse
from tests.helpers import ROOT, publish_synthetic, python_env
from tests.scrapers.test_faults import Server


def write_config(folder: Path, text: str) -> Path:
    path = folder / "fabricscope.toml"
    path.write_text(text, encoding="utf-8")
    return path


def environment(folder: Path, config: Path) -> dict[str, str]:
    return {
        **python_env(),
        "FABRICSCOPE_CONFIG": str(config),
        "FABRICSCOPE_DATA_DIR": str(folder / "data"),
        "FABRICSCOPE_WAREHOUSE": str(folder / "data" / "warehouse.duckdb"),
    }


def cli(
    folder: Path, config: Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """One `fabricscope` command with the test's folder and configuration."""
    return subprocess.run(
        [sys.executable, "-m", "fabricscope.cli", *args],
        cwd=ROOT,
        env=environment(folder, config),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start(folder: Path, config: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "fabricscope.cli", "schedule", *args],
        cwd=ROOT,
        env=environment(folder, config),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def watched(folder: Path, config: Path, *args: str) -> tuple[subprocess.Popen[str], Watch]:
    """A scheduler started with its log read as it runs."""
    process = start(folder, config, *args)
    return process, Watch(process)


class Watch:
    """The scheduler's log (its stderr) read line by line as it runs, so a test waits for
    what the scheduler says it did instead of sleeping and hoping it did it."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def count(self, needle: str) -> int:
        return sum(needle in line for line in list(self.lines))

    def wait(self, needle: str, timeout: float, times: int = 1) -> bool:
        return wait_for(lambda: self.count(needle) >= times, timeout)


def stop(
    process: subprocess.Popen[str], watch: Watch | None = None, timeout: float = 40
) -> tuple[int, str, float]:
    """SIGTERM, then the exit code, the whole log and how long the stop took."""
    watch = watch or Watch(process)
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=timeout)
    took = time.monotonic() - began
    watch.reader.join(timeout=timeout)
    return process.returncode, watch.text, took


def runs(folder: Path, source: str) -> pd.DataFrame:
    _, frame = read_frame(
        folder / "data" / "warehouse.duckdb",
        "select run_id, status, started_at, finished_at, error_text from scrape_runs "
        "where source = ? order by started_at",
        [source],
    )
    return frame


def wait_for(predicate, timeout: float, every: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return False


def test_invalid_schedule_config_refuses_to_start(tmp_path):
    cases = [
        ('[schedule.sources.skypilot_hyperbolic]\ncron = "61 * * * *"\n', "not a valid cron line"),
        ('[schedule.sources.skypilot_hyperbolic]\ncron = "every hour"\n', "not a cron line"),
        ('[schedule.sources.no_such_source]\ncron = "5 * * * *"\n', "unknown source"),
        ("[schedule]\nonly = ['nope']\n", "unknown source 'nope'"),
        ("[schedule]\nmisfire_grace_s = 0\n", "misfire_grace_s"),
        ("[schedule]\nsurprise = 1\n", "unknown setting"),
    ]
    for text, message in cases:
        config = write_config(tmp_path, text)
        done = cli(tmp_path, config, "schedule", "--once", "--offline", timeout=60)
        assert done.returncode == 2, (text, done.stderr)
        assert message in done.stderr and done.stderr.count("\n") == 1, (text, done.stderr)
        assert not (tmp_path / "data" / "warehouse.duckdb").exists()  # refused before work


def test_two_schedulers_at_once_the_second_refuses_and_the_catch_up_runs_once(tmp_path):
    config = write_config(
        tmp_path,
        "[schedule]\njitter_s = 0\nonly = ['skypilot_hyperbolic']\n"
        "[schedule.sources.skypilot_hyperbolic]\ncron = '0 0 1 1 *'\n",  # only the catch-up
    )
    first, first_log = watched(tmp_path, config, "--offline")
    second, second_log = watched(tmp_path, config, "--offline")
    finished = wait_for(lambda: first.poll() is not None or second.poll() is not None, 30)
    assert finished, "one of the two should have refused at once"
    loser, winner = (first, second) if first.poll() is not None else (second, first)
    loser_log, winner_log = (first_log, second_log) if loser is first else (second_log, first_log)
    loser.wait(timeout=10)
    loser_log.reader.join(timeout=10)
    assert loser.returncode == 1 and "another fabricscope schedule is running" in loser_log.text
    assert "crawl started" not in loser_log.text
    # the source never ran: the one scheduler running starts with its one catch-up run
    assert winner_log.wait("skypilot_hyperbolic: ok", timeout=120), winner_log.text
    code, log, _ = stop(winner, winner_log)
    assert code == 0, log
    assert len(runs(tmp_path, "skypilot_hyperbolic")) == 1, log
    assert winner_log.count("crawl started (catch-up)") == 1, log
    assert winner_log.count("crawl started") == 1 and "skipped" not in log, log


def test_sigterm_mid_crawl_exits_cleanly_and_publishes_nothing_partial(tmp_path):
    server = Server()
    server.thread.start()
    try:
        path = tmp_path / "data" / "warehouse.duckdb"
        init_warehouse(path)
        # data over a year old: its run precedes the cron's previous fire, so the scheduler
        # starts with a catch-up crawl, the only one (the cron never fires in the test)
        publish_synthetic(path, 10, source="lambda_cloud", age=timedelta(days=400))
        _, offers_before = read_frame(path, "select * from offers_current order by all")
        assert len(offers_before) == 10
        hash_before = current_snapshot(path).snapshot_hash
        config = write_config(
            tmp_path,
            "[schedule]\njitter_s = 0\nshutdown_grace_s = 1\nonly = ['lambda_cloud']\n"
            "[schedule.sources.lambda_cloud]\ncron = '0 0 1 1 *'\n"
            f"start_url = '{server.url('/hang')}'\n",  # answers after 30 s
        )
        process = start(tmp_path, config, "--live")
        assert wait_for(lambda: server.hits.get("/hang"), 40), "the crawl should be fetching"
        code, log, took = stop(process)
        assert code == 0, log
        assert took < 25, took  # grace 1 s, then the crawl is stopped
        assert current_snapshot(path).snapshot_hash == hash_before  # no new content
        _, offers_after = read_frame(path, "select * from offers_current order by all")
        pd.testing.assert_frame_equal(offers_after, offers_before)
        last = runs(tmp_path, "lambda_cloud").iloc[-1]
        assert last["status"] == "aborted", (last.to_dict(), log)
    finally:
        server.httpd.shutdown()


def test_a_failing_source_keeps_its_last_good_data_while_two_others_publish(tmp_path):
    server = Server()
    server.thread.start()
    try:
        path = tmp_path / "data" / "warehouse.duckdb"
        init_warehouse(path)
        # the failing source's last good data: three days old, so it is due (and stale)
        publish_synthetic(path, 7, source="voltage_park", age=timedelta(days=3))
        _, kept = read_frame(
            path, "select * from offers_current where source = 'voltage_park' order by all"
        )
        config = write_config(
            tmp_path,
            "[schedule]\njitter_s = 0\nonly = ['lambda_cloud', 'hyperstack', 'voltage_park']\n"
            "[schedule.sources.lambda_cloud]\n"
            f"start_url = '{server.url('/pricing')}'\n"
            "[schedule.sources.hyperstack]\n"
            f"start_url = '{server.url('/fixtures/hyperstack/' + _hyperstack_page())}'\n"
            "[schedule.sources.voltage_park]\n"
            f"start_url = '{server.url('/down')}'\n",
        )
        done = cli(tmp_path, config, "schedule", "--once", "--live", timeout=240)
        assert done.returncode == 3, done.stderr  # some due jobs failed
        for source in ("lambda_cloud", "hyperstack"):
            assert runs(tmp_path, source).iloc[-1]["status"] == "ok", done.stderr
        failed = runs(tmp_path, "voltage_park").iloc[-1]
        assert failed["status"] == "failed" and "503" in failed["error_text"], failed.to_dict()
        _, still = read_frame(
            path, "select * from offers_current where source = 'voltage_park' order by all"
        )
        pd.testing.assert_frame_equal(still, kept)
        status = cli(
            tmp_path, tmp_path / "fabricscope.toml", "status", "--format", "csv", timeout=60
        )
        line = next(x for x in status.stdout.splitlines() if x.startswith("voltage_park,"))
        assert ",True," in line and "503" in line, status.stdout  # stale, with the error
        assert "stale sources" in done.stderr and "voltage_park" in done.stderr
    finally:
        server.httpd.shutdown()


def _hyperstack_page() -> str:
    import json

    entries = json.loads((ROOT / "fixtures" / "hyperstack" / "requests.json").read_text())
    return entries[-1]["file"]


def test_the_lock_is_released_when_the_scheduler_stops(tmp_path):
    config = write_config(
        tmp_path,
        "[schedule]\njitter_s = 0\nonly = ['skypilot_hyperbolic']\n"
        "[schedule.sources.skypilot_hyperbolic]\ncron = '0 0 1 1 *'\n",
    )
    first, first_log = watched(tmp_path, config, "--offline")
    assert first_log.wait("scheduling 1 sources", timeout=60), first_log.text  # lock held
    assert (tmp_path / "data" / "scheduler.lock").exists()
    assert stop(first, first_log)[0] == 0
    again, again_log = watched(tmp_path, config, "--offline")
    # it schedules only once it holds the lock: the first one released it
    assert again_log.wait("scheduling 1 sources", timeout=60), again_log.text
    assert again.poll() is None, again_log.text
    assert stop(again, again_log)[0] == 0


def test_a_source_can_have_its_own_staleness_threshold(tmp_path):
    path = tmp_path / "data" / "warehouse.duckdb"
    init_warehouse(path)
    publish_synthetic(path, 3, source="skypilot_hyperbolic", age=timedelta(hours=10))
    publish_synthetic(path, 3, source="voltage_park", age=timedelta(hours=10))
    config = write_config(
        tmp_path, "[schedule.sources.skypilot_hyperbolic]\nstale_after_hours = 2\n"
    )  # hourly marketplace: stale after 2 h; the others after the global 48 h
    done = cli(tmp_path, config, "status", "--format", "csv", timeout=60)
    assert done.returncode == 0, done.stderr
    rows = {line.split(",")[0]: line.split(",")[1:3] for line in done.stdout.splitlines()[1:]}
    assert rows["skypilot_hyperbolic"] == ["True", "2.0"]
    assert rows["voltage_park"] == ["False", "48.0"]
    assert "stale: skypilot_hyperbolic" in done.stderr


def test_a_crawl_past_its_timeout_is_killed_and_recorded(tmp_path):
    server = Server()
    server.thread.start()
    try:
        config = write_config(
            tmp_path,
            "[schedule]\nonly = ['lambda_cloud']\n"
            "[schedule.sources.lambda_cloud]\ntimeout_s = 3\n"
            f"start_url = '{server.url('/hang')}'\n",  # answers after 30 s
        )
        began = time.monotonic()
        done = cli(tmp_path, config, "schedule", "--once", "--live", timeout=120)
        assert time.monotonic() - began < 25
        assert done.returncode == 1, done.stderr  # the only due job failed
        last = runs(tmp_path, "lambda_cloud").iloc[-1]
        assert last["status"] == "failed" and "timed out after 3 s" in last["error_text"]
    finally:
        server.httpd.shutdown()


def test_the_service_recomputes_the_estimates_after_a_publish(tmp_path):
    config = write_config(
        tmp_path,
        "[schedule]\njitter_s = 0\nestimates_delay_s = 0\nonly = ['voltage_park']\n"
        "[schedule.sources.voltage_park]\ncron = '0 0 1 1 *'\n",  # only the catch-up run
    )
    process = start(tmp_path, config, "--offline")
    path = tmp_path / "data" / "warehouse.duckdb"

    def estimated() -> bool:
        try:
            return not read_frame(path, "select * from estimates_current")[1].empty
        except Exception:
            return False

    assert wait_for(estimated, 60)
    code, log, _ = stop(process)
    assert code == 0 and "estimates:" in log, log
    _, rows = read_frame(path, "select distinct provider from estimates_current")
    assert set(rows["provider"]) == {"voltage_park"}
