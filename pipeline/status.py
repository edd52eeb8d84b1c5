"""Freshness of every source: what `fabricscope status` and the app show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from warehouse.db import SnapshotInfo, read_frame

FRESHNESS_SQL = (
    "select source, data_as_of, last_good_at, last_status, failures_since_last_good, "
    "age_hours, last_error from source_freshness order by source"
)


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
