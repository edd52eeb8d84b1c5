"""SIGKILL the publishing process at many points; the last snapshot must survive."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time

from fabricscope.warehouse.db import current_snapshot, read_frame, verify
from fabricscope.warehouse.models import RunStatus
from tests.helpers import ROOT, publish_synthetic, python_env

ROWS = 40_000
# Stages where the publisher is stopped and killed deterministically.
STAGES = ["copied", "loaded", "tested", "checkpointed", "before_rename", "renamed"]
RANDOM_KILLS = 20


def start_publisher(path, seed, pause_at=None):
    args = [
        sys.executable,
        "-m",
        "tests.warehouse.procs",
        "publisher",
        str(path),
        str(ROWS),
        str(seed),
    ]
    if pause_at:
        args.append(pause_at)
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=python_env(), cwd=ROOT
    )


def wait_for(process, line):
    for received in process.stdout:
        if received.strip() == line:
            return
    raise AssertionError(f"publisher ended before {line!r}: {process.stderr.read()}")


def assert_intact(path, before_id):
    """The published file opens, matches its recorded hash, and is the old or the new snapshot."""
    snapshot = current_snapshot(path)
    assert snapshot.snapshot_id in (before_id, before_id + 1)
    report = verify(path)
    assert report.ok, report
    recorded = read_frame(
        path, "select snapshot_hash from snapshots order by snapshot_id desc limit 1"
    )[1].iloc[0, 0]
    assert report.recomputed_hash == recorded == snapshot.snapshot_hash
    return snapshot


def kill(process):
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    process.stdout.close()
    process.stderr.close()


def test_sigkill_at_any_point_leaves_the_last_published_snapshot(warehouse_path):
    publish_synthetic(warehouse_path, ROWS, source="crashy", seed=1000)
    timing = start_publisher(warehouse_path, seed=999)
    started = None
    for line in timing.stdout:
        if line.strip() == "start":
            started = time.monotonic()
        if line.startswith("done"):
            break
    duration = time.monotonic() - started
    timing.wait(timeout=60)
    assert timing.returncode == 0, timing.stderr.read()

    rng = random.Random(20261130)
    plan = [("stage", s) for s in STAGES for _ in range(2)]
    plan += [("random", None)] * RANDOM_KILLS
    outcomes = {"old": 0, "new": 0}
    for seed, (kind, stage) in enumerate(plan):
        before = current_snapshot(warehouse_path)
        if kind == "stage":
            process = start_publisher(warehouse_path, seed, pause_at=stage)
            wait_for(process, stage)
        else:
            process = start_publisher(warehouse_path, seed)
            wait_for(process, "start")
            time.sleep(rng.uniform(0, duration * 1.1))
        kill(process)
        after = assert_intact(warehouse_path, before.snapshot_id)
        outcomes["new" if after.snapshot_id > before.snapshot_id else "old"] += 1
        if kind == "stage":
            # before the rename nothing is published; from the rename on, everything is
            expected_new = STAGES.index(stage) >= STAGES.index("renamed")
            assert (after.snapshot_id > before.snapshot_id) == expected_new, stage
    assert sum(outcomes.values()) >= 30
    # the next publish works and cleans up what the killed ones left behind
    status, _ = publish_synthetic(warehouse_path, 100, source="after_crashes", seed=7)
    assert status is RunStatus.OK
    assert not list(warehouse_path.parent.glob("*.staging-*"))
    assert verify(warehouse_path).ok
