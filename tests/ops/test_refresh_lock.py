"""One writer, really: a second refresh (or a scheduler beside a refresh) refuses at once and
changes nothing; a refresh killed outright takes its crawl with it, recorded as aborted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from fabricscope.ops.locks import refresh_lock_path
from fabricscope.warehouse.db import read_frame
from fabricscope.warehouse.load import init_warehouse
from tests.helpers import ROOT, fabricscope, python_env
from tests.ops.test_schedule import start, stop, wait_for, write_config
from tests.scrapers.test_faults import Server

HOLD_THE_REFRESH_LOCK = """
import sys, time
from pathlib import Path
from fabricscope.ops.locks import ProcessLock, refresh_lock_path
with ProcessLock(refresh_lock_path(Path(sys.argv[1])), "fabricscope refresh"):
    print("holding", flush=True)
    time.sleep(120)
"""


def env_of(folder: Path) -> dict[str, str]:
    return {
        "FABRICSCOPE_WAREHOUSE": str(folder / "data" / "warehouse.duckdb"),
        "FABRICSCOPE_DATA_DIR": str(folder / "data"),
    }


def runs(warehouse: Path) -> int:
    return int(read_frame(warehouse, "select count(*) as n from scrape_runs")[1]["n"].iloc[0])


def test_a_second_refresh_refuses_at_once_and_changes_nothing(tmp_path):
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    init_warehouse(warehouse)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_REFRESH_LOCK, str(warehouse)],
        stdout=subprocess.PIPE,
        text=True,
        env=python_env(),
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        before = runs(warehouse)
        second = fabricscope(
            "refresh", "--offline", "-s", "skypilot_hyperbolic", env=env_of(tmp_path)
        )
        assert second.returncode == 1, second.stderr
        assert "another refresh is running" in second.stderr
        assert f"pid {holder.pid}, fabricscope refresh" in second.stderr
        assert "nothing was crawled" in second.stderr and "Traceback" not in second.stderr
        # a scheduler does not start beside it either
        config = write_config(tmp_path, "[schedule]\njitter_s = 0\n")
        scheduled = fabricscope(
            "schedule",
            "--once",
            "--offline",
            env={**env_of(tmp_path), "FABRICSCOPE_CONFIG": str(config)},
        )
        assert scheduled.returncode == 1 and "another refresh is running" in scheduled.stderr
        assert runs(warehouse) == before, "refused before anything was crawled"
    finally:
        holder.kill()
        holder.wait()
    # the holder is gone (however it went): its lock went with it
    done = fabricscope("refresh", "--offline", "-s", "skypilot_hyperbolic", env=env_of(tmp_path))
    assert done.returncode == 0, done.stderr
    assert runs(warehouse) == before + 1


def test_the_scheduler_holds_the_refresh_lock_while_it_runs(tmp_path):
    config = write_config(
        tmp_path,
        "[schedule]\njitter_s = 0\nonly = ['skypilot_hyperbolic']\n"
        "[schedule.sources.skypilot_hyperbolic]\ncron = '0 0 1 1 *'\n",  # not due meanwhile
    )
    lock = refresh_lock_path(tmp_path / "data" / "warehouse.duckdb")
    process = start(tmp_path, config, "--offline")
    try:
        assert wait_for(lambda: lock.exists() and "fabricscope schedule" in lock.read_text(), 60), (
            "the scheduler takes the refresh lock at start"
        )
        refused = fabricscope(
            "refresh", "--offline", "-s", "skypilot_hyperbolic", env=env_of(tmp_path)
        )
        assert refused.returncode == 1
        assert f"pid {process.pid}, fabricscope schedule" in refused.stderr
    finally:
        code, log, _ = stop(process)
    assert code == 0, log


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):  # the process has gone
        return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # /proc of a process that has gone
        return False
    return state != "Z"  # a zombie has ended; only its exit status waits to be read


def test_killing_the_refresh_stops_its_crawl_which_records_an_aborted_run(tmp_path):
    server = Server()
    server.thread.start()
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    init_warehouse(warehouse)
    script = (
        "import sys\nfrom pathlib import Path\nfrom fabricscope.ops.refresh import refresh\n"
        "refresh(Path(sys.argv[1]), Path(sys.argv[2]), ['lambda_cloud'], offline=False,"
        " extra_args=['--start-url', 'lambda_cloud=' + sys.argv[3]])\n"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script, str(warehouse), str(tmp_path / "data"), server.url("/hang")],
        env=python_env(),
        cwd=ROOT,
    )
    try:
        assert wait_for(lambda: server.hits.get("/hang"), 60), "the crawl should be fetching"
        crawls = _children(parent.pid)
        assert len(crawls) == 1
        os.kill(parent.pid, signal.SIGKILL)  # no chance to clean up
        parent.wait()
        assert wait_for(lambda: not _alive(crawls[0]), 90), "the crawl must not outlive it"
    finally:
        if parent.poll() is None:
            parent.kill()
        server.httpd.shutdown()
    _, recorded = read_frame(
        warehouse,
        "select status, error_text from scrape_runs where source = 'lambda_cloud'",
    )
    assert recorded["status"].tolist() == ["aborted"], recorded
    _, offers = read_frame(warehouse, "select count(*) as n from offers_current")
    assert int(offers["n"].iloc[0]) == 0, "nothing partial is published"


def test_a_refresh_past_its_wall_clock_is_stopped_and_recorded_failed(tmp_path):
    from fabricscope.ops.refresh import refresh

    server = Server()
    server.thread.start()
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    init_warehouse(warehouse)
    try:
        [outcome] = refresh(
            warehouse,
            tmp_path / "data",
            ["lambda_cloud"],
            offline=False,
            extra_args=["--start-url", f"lambda_cloud={server.url('/hang')}"],  # answers at 30 s
            timeout_s=2.0,
        )
    finally:
        server.httpd.shutdown()
    # stopped at the deadline; the page answers only at 30 s, so the graceful stop cannot
    # finish either and the crawl is killed 10 s later: this process records the run
    assert outcome.status == "failed" and "timed out after 2 s" in outcome.error
    _, recorded = read_frame(
        warehouse, "select status, error_text from scrape_runs where source = 'lambda_cloud'"
    )
    assert recorded["status"].tolist() == ["failed"], recorded
    assert "timed out after 2 s" in recorded["error_text"].iloc[0]
    _, offers = read_frame(warehouse, "select count(*) as n from offers_current")
    assert int(offers["n"].iloc[0]) == 0
