"""A refresh SIGKILLed at any point of its crawl takes the crawl with it: the real CLI is
killed before its spiders open, while they open, while they crawl and while they publish;
after each kill no run is recorded ok, the crawl process exits, and the next refresh runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from fabricscope.warehouse.db import read_frame
from tests.helpers import ROOT, fabricscope, python_env
from tests.ops.test_refresh_lock import _alive, _children
from tests.ops.test_schedule import wait_for

# How long a crawl may take to exit once its refresh is gone: it stops its spiders and
# records each one it had started as aborted (one snapshot each) on a 2-core machine.
EXIT_DEADLINE_S = 60.0


def crawl_child(cli: int) -> int | None:
    """The refresh's crawl process (``fabricscope.scrapers.tools crawl``), once started."""
    for pid in _children(cli):
        try:
            if b"crawl" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                return pid
        except (FileNotFoundError, ProcessLookupError):  # gone between listing and reading
            continue
    return None


def log_lines(data_dir: Path, text: str) -> int:
    """How many lines of the crawl's log say ``text`` (0 before the log exists)."""
    logs = list((data_dir / "logs").glob("refresh-*.log"))
    return sum(log.read_text(errors="replace").count(text) for log in logs)


# Where to kill: a condition on the crawl's log, checked as the crawl runs.
KILL_POINTS: dict[str, Callable[[Path], bool]] = {
    "started, no spider open yet": lambda data: True,
    "first spider opening": lambda data: log_lines(data, "Spider opened") >= 1,
    "spiders still opening": lambda data: log_lines(data, "Spider opened") >= 15,
    "first spider finished": lambda data: log_lines(data, "Closing spider (finished)") >= 1,
    "runs publishing": lambda data: log_lines(data, "Closing spider (finished)") >= 12,
}


def runs_after(warehouse: Path, moment: datetime) -> dict[str, int]:
    """Runs recorded (by status) that finished after ``moment``."""
    _, frame = read_frame(
        warehouse,
        "select status, count(*) as n from scrape_runs where finished_at > ? group by status",
        [moment],
    )
    return dict(zip(frame["status"], frame["n"].astype(int), strict=True))


def kill_refresh_when(
    warehouse: Path, data_dir: Path, point: Callable[[Path], bool]
) -> tuple[datetime, int]:
    """Start `fabricscope refresh --offline` in its own session, SIGKILL it when its crawl
    has started and ``point`` holds; returns when it was dead for sure, and its crawl's pid."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "fabricscope.cli", "refresh", "--offline"],
        env={
            **python_env(),
            "FABRICSCOPE_WAREHOUSE": str(warehouse),
            "FABRICSCOPE_DATA_DIR": str(data_dir),
        },
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # as under setsid: its death reaches no one else
    )
    try:
        assert wait_for(lambda: crawl_child(cli.pid), 60, every=0.01), "no crawl started"
        crawl = crawl_child(cli.pid)
        assert crawl is not None
        assert wait_for(lambda: point(data_dir), 60, every=0.01), "the kill point never came"
        os.kill(cli.pid, signal.SIGKILL)  # no chance to clean up
        cli.wait(timeout=30)
        # the refresh is certainly dead now: a run finished before this may have been ok
        return datetime.now(UTC), crawl
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()


def test_a_killed_refresh_takes_its_crawl_with_it_at_any_point(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse.duckdb"
    env = {"FABRICSCOPE_DATA_DIR": str(tmp_path / "init")}
    assert fabricscope("init", "--warehouse", str(warehouse), env=env).returncode == 0
    after_kills: dict[str, dict[str, int]] = {}
    for index, (name, point) in enumerate(KILL_POINTS.items()):
        data_dir = tmp_path / f"kill{index}"  # each crawl's log on its own
        dead_at, crawl = kill_refresh_when(warehouse, data_dir, point)
        exited = wait_for(lambda pid=crawl: not _alive(pid), EXIT_DEADLINE_S, every=0.05)
        if not exited:
            os.kill(crawl, signal.SIGKILL)
        assert exited, f"killed at {name!r}: the crawl outlived its refresh"
        after_kills[name] = runs_after(warehouse, dead_at)
        assert "ok" not in after_kills[name], (name, after_kills[name])
        # a closed event pipe is said once, not as a traceback per spider
        assert log_lines(data_dir, "Traceback") == 0, name
        assert log_lines(data_dir, "pipe is closed") <= 1, name
    # a crawl killed before any spider opened opens none: nothing is recorded for it
    assert after_kills["started, no spider open yet"] == {}, after_kills
    # the next refresh takes the lock and publishes
    done = fabricscope(
        "refresh",
        "--offline",
        "-s",
        "skypilot_hyperbolic",
        env={"FABRICSCOPE_WAREHOUSE": str(warehouse), "FABRICSCOPE_DATA_DIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    _, last = read_frame(
        warehouse,
        "select status from scrape_runs where source = 'skypilot_hyperbolic'"
        " order by finished_at desc limit 1",
    )
    assert last["status"].tolist() == ["ok"]
