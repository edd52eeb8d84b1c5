"""The Rank page over a warehouse of 100,000 offers, rendered by streamlit.testing's AppTest.

The first render of a snapshot reads it and ranks every offer (cold); later renders of the
same view hit the caches keyed by snapshot id (warm), as a user's reruns and colleagues
opening the same link do. Target (issue 7): under 1.5 s on 2 cores, median of several runs.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from fabricscope.warehouse.load import RunBatch, RunRecord, init_warehouse, new_run_id, publish_run
from fabricscope.warehouse.models import RunMode, RunStatus, utc_now
from fabricscope.warehouse.synthetic import synthetic_offers

OFFERS = 100_000
RUNS = 5
APP = str(Path(__file__).resolve().parent.parent / "fabricscope" / "app" / "app.py")


def _render() -> float:
    began = time.perf_counter()
    app = AppTest.from_file(APP, default_timeout=300)
    app.run()
    took = time.perf_counter() - began
    if app.exception:
        raise RuntimeError(f"the Rank page failed: {app.exception[0].message}")
    return took


def run(report: Callable[[str], None]) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "warehouse.duckdb"
        init_warehouse(path)
        now = utc_now()
        record = RunRecord(new_run_id("bench"), "bench", RunMode.REPLAY, now, now, RunStatus.OK)
        publish_run(path, RunBatch(record, synthetic_offers(OFFERS, source="bench")))
        before = dict(os.environ)
        os.environ["FABRICSCOPE_WAREHOUSE"] = str(path)
        os.environ["FABRICSCOPE_DATA_DIR"] = folder
        try:
            report(f"app: Rank page over {OFFERS:,} offers, cold then {RUNS} warm renders")
            cold = _render()
            warm = [_render() for _ in range(RUNS)]
        finally:
            os.environ.clear()
            os.environ.update(before)
    median = statistics.median(warm)
    report(f"app: cold {cold:.2f} s, warm median {median:.2f} s")
    return [
        f"## The Rank page over {OFFERS:,} offers",
        "",
        f"streamlit.testing AppTest, default view (Llama 3 8B on 64 GPUs, on-demand): median of "
        f"{RUNS} renders **{median:.2f} s** (target: under 1.5 s on 2 cores; each render is a "
        f"new session, the reads and rankings cached by snapshot id). The first render of the "
        f"snapshot, which reads it and ranks every offer: {cold:.2f} s.",
        "",
        "| render | seconds |",
        "|---|---:|",
        f"| first (cold) | {cold:.2f} |",
        *[f"| {i + 1} | {t:.2f} |" for i, t in enumerate(warm)],
        "",
    ]
