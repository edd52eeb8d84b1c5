"""Freshness of every source: what `fabricscope status` and the app show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fabricscope.warehouse import reads
from fabricscope.warehouse.db import SnapshotInfo, read_frame, read_frames

FRESHNESS_SQL = reads.sql("freshness")

# what the ranking can stand on (fabricscope/warehouse/sql/views/060_coverage.sql)
COVERAGE_SQL = reads.sql("coverage")
GAPS_SQL = reads.sql("coverage_gaps")


@dataclass(frozen=True)
class Coverage:
    """Shares of offers with an identified GPU and of cluster-capable offers with a fabric
    class, and the cluster-capable instance types still without one (each with why)."""

    figures: dict[str, float | int | None]
    gaps: pd.DataFrame


def coverage(warehouse: Path) -> Coverage:
    _, frames = read_frames(warehouse, {"figures": COVERAGE_SQL, "gaps": GAPS_SQL})
    rows = frames["figures"].astype(object).to_dict("records")
    figures = {k: (None if pd.isna(v) else v) for k, v in (rows[0] if rows else {}).items()}
    return Coverage(figures, frames["gaps"])


@dataclass(frozen=True)
class FreshnessReport:
    snapshot: SnapshotInfo
    frame: pd.DataFrame  # one row per source, with a boolean ``stale`` column
    stale_sources: tuple[str, ...]


def freshness_report(
    warehouse: Path, stale_after_hours: float, per_source: Mapping[str, float] | None = None
) -> FreshnessReport:
    """A source is stale when its last good run is older than its threshold or missing.

    ``per_source`` overrides the threshold for some sources (the configuration's
    ``schedule.sources.NAME.stale_after_hours``)."""
    snapshot, frame = read_frame(warehouse, FRESHNESS_SQL)
    limits = frame["source"].map(lambda s: (per_source or {}).get(s, stale_after_hours))
    stale = frame["age_hours"].isna() | (frame["age_hours"] > limits.astype(float))
    frame.insert(1, "stale", stale.astype(bool))
    frame.insert(2, "stale_after_hours", limits.astype(float))
    return FreshnessReport(snapshot, frame, tuple(frame.loc[stale, "source"]))
