"""The browser benchmark measures both pages once, end to end: it fails when a page never
shows its table (no timed assertions; the figures themselves go to bench/results.md)."""

from __future__ import annotations

import math
from pathlib import Path

from bench import bench_browser


def test_one_run_times_every_phase_of_both_pages_and_reports_their_ratios(
    fixture_warehouse: Path,
) -> None:
    said: list[str] = []
    timings = bench_browser.measure(fixture_warehouse, runs=1, report=said.append)

    assert set(timings) == {"Rank", "Offers"}
    for page, phases in timings.items():
        assert list(phases) == list(bench_browser.PHASES), page
        for phase, seconds in phases.items():
            assert len(seconds) == 1, (page, phase)
            assert math.isfinite(seconds[0]) and seconds[0] > 0, (page, phase)
    assert len(said) == 2  # one line per page and run

    lines = bench_browser.section(timings, fixture_warehouse)
    rows = [line for line in lines if line.startswith("| ") and "x** |" in line]
    assert [row.split("|")[1].strip() for row in rows] == list(bench_browser.PHASES)
    text = "\n".join(lines)
    assert "estimates_current" in text and "Offers" in text
