"""Real processes for the concurrency and crash tests: ``python -m tests.warehouse.procs``.

reader PATH LAST_SNAPSHOT ROWS_PER_RUN
    Query the published file in a loop, each query on a fresh read-only connection, until it
    has seen snapshot LAST_SNAPSHOT (at most 10 minutes); print "reading" after the first
    query, then one JSON line: queries made, errors, inconsistent snapshots, ids seen.
publisher PATH ROWS SEED [PAUSE_AT]
    Publish one synthetic run, printing each stage as it is reached; at PAUSE_AT
    it stops and waits (to be killed there).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from fabricscope.warehouse.db import read_connection
from tests.helpers import publish_synthetic


def reader(path: Path, last_snapshot: int, rows_per_run: int) -> None:
    queries = errors = inconsistent = 0
    seen: set[int] = set()
    messages: list[str] = []
    deadline = time.monotonic() + 600
    while last_snapshot not in seen and time.monotonic() < deadline:
        try:
            with read_connection(path) as (con, snapshot):
                row = con.execute(
                    "select (select count(*) from offers_history),"
                    " (select count(*) from scrape_runs),"
                    " (select max(snapshot_id) from snapshots)"
                ).fetchone()
            assert row is not None
            history, runs, latest = (int(v) for v in row)
            # snapshot 1 is the init; each later one published one run of rows_per_run
            if not (
                latest == snapshot.snapshot_id
                and runs == latest - 1
                and history == runs * rows_per_run
            ):
                inconsistent += 1
                messages.append(f"snapshot {latest}: {runs} runs, {history} rows")
            seen.add(latest)
            queries += 1
            if queries == 1:
                print("reading", flush=True)
        except Exception as exc:  # every error counts: none is acceptable
            errors += 1
            messages.append(f"{type(exc).__name__}: {exc}")
    print(
        json.dumps(
            {
                "queries": queries,
                "errors": errors,
                "inconsistent": inconsistent,
                "seen": sorted(seen),
                "messages": messages[:5],
            }
        )
    )


def publisher(path: Path, rows: int, seed: int, pause_at: str | None) -> None:
    def on_stage(stage: str) -> None:
        print(stage, flush=True)
        if stage == pause_at:
            time.sleep(600)

    print("start", flush=True)
    status, result = publish_synthetic(path, rows, source="crashy", seed=seed, on_stage=on_stage)
    assert result.snapshot is not None
    print(f"done {status.value} {result.snapshot.snapshot_id}", flush=True)


if __name__ == "__main__":
    kind, target = sys.argv[1], Path(sys.argv[2])
    if kind == "reader":
        reader(target, int(sys.argv[3]), int(sys.argv[4]))
    elif kind == "publisher":
        publisher(
            target, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None
        )
    else:
        raise SystemExit(f"unknown process kind {kind!r}")
