"""The browser benchmark measures the Rank page live and served once each, end to end: it
fails when a page never shows its tables, or is not served the way it claims (no timed
assertions; the figures themselves go to bench/results.md)."""

from __future__ import annotations

import math
from pathlib import Path

from bench import bench_browser


def test_one_run_times_every_phase_live_and_served_and_reports_their_ratios(
    fixture_warehouse: Path,
) -> None:
    said: list[str] = []
    timings = bench_browser.measure(fixture_warehouse, runs=1, report=said.append)

    assert set(timings) == {"Rank, ranked live", "Rank, served stored"}
    for page, phases in timings.items():
        assert list(phases) == list(bench_browser.PHASES), page
        for phase, seconds in phases.items():
            assert len(seconds) == 1, (page, phase)
            assert math.isfinite(seconds[0]) and seconds[0] > 0, (page, phase)
    assert len(said) == 2  # one line per mode and run

    lines = bench_browser.section(timings, fixture_warehouse)
    rows = [line for line in lines if line.startswith("| ") and "x** |" in line]
    assert [row.split("|")[1].strip() for row in rows] == list(bench_browser.PHASES)
    text = "\n".join(lines)
    assert "served from the stored rankings" in text and "512 GPUs (" in text
