"""Readers in four real processes while a writer publishes snapshot after snapshot."""

from __future__ import annotations

import json
import subprocess
import sys

from fabricscope.warehouse.db import current_snapshot, verify
from tests.helpers import ROOT, publish_synthetic, python_env

ROWS_PER_RUN = 2_000
SNAPSHOTS = 8


def test_readers_never_fail_and_always_see_one_whole_snapshot(warehouse_path):
    readers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.warehouse.procs",
                "reader",
                str(warehouse_path),
                str(1 + SNAPSHOTS),  # each reads until it has seen the last publish
                str(ROWS_PER_RUN),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=python_env(),
            cwd=ROOT,
        )
        for _ in range(4)
    ]
    for process in readers:  # each has read snapshot 1 once
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "reading", process.communicate()[1]
    for seed in range(SNAPSHOTS):
        publish_synthetic(warehouse_path, ROWS_PER_RUN, source=f"source_{seed % 3}", seed=seed)
    reports = []
    for process in readers:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        reports.append(json.loads(stdout.strip().splitlines()[-1]))
    for report in reports:
        assert report["errors"] == 0, report["messages"]
        assert report["inconsistent"] == 0, report["messages"]
        assert report["queries"] > 1
    for report in reports:  # each read snapshot 1 before any publish, and the last one
        assert {1, 1 + SNAPSHOTS} <= set(report["seen"]), report
    assert current_snapshot(warehouse_path).snapshot_id == 1 + SNAPSHOTS
    assert verify(warehouse_path).ok
