"""Shared pieces of the app: where the warehouse is, cached reads, the status line."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from pipeline.config import ConfigError, load_settings
from pipeline.refresh import ensure_warehouse
from warehouse.db import SnapshotInfo, WarehouseError, current_snapshot, read_frames
from warehouse.query import QueryLimits


def settings_or_stop() -> tuple[Path, float, QueryLimits]:
    try:
        settings = load_settings()
    except ConfigError as exc:
        st.error(f"Configuration problem: {exc}")
        st.stop()
    return settings.warehouse, settings.stale_after_hours, settings.query_limits


def as_of() -> datetime | None:
    """The ``as_of`` setting: prices are aged at that time; None means the clock."""
    try:
        return load_settings().as_of
    except ConfigError as exc:
        st.error(f"Configuration problem: {exc}")
        st.stop()


class _SnapshotChanged(RuntimeError):
    """A snapshot was published between finding the current id and reading it."""


@st.cache_data(show_spinner=False, max_entries=32)
def _cached_frames(
    path: str, snapshot_id: int, queries: tuple[tuple[str, str], ...]
) -> tuple[SnapshotInfo, dict[str, pd.DataFrame]]:
    # snapshot_id is part of the cache key: a new snapshot means new entries.
    snapshot, frames = read_frames(Path(path), dict(queries))
    if snapshot.snapshot_id != snapshot_id:
        # published between finding the id and reading: never cache it under the old id
        raise _SnapshotChanged(f"asked for snapshot {snapshot_id}, read {snapshot.snapshot_id}")
    return snapshot, frames


def read_snapshot(
    path: Path, queries: dict[str, str]
) -> tuple[SnapshotInfo, dict[str, pd.DataFrame]]:
    """All of a page's data from one snapshot, cached per snapshot."""
    snapshot = snapshot_or_setup(path)
    try:
        return _cached_frames(str(path), snapshot.snapshot_id, tuple(sorted(queries.items())))
    except _SnapshotChanged:
        st.rerun()


def snapshot_or_setup(path: Path) -> SnapshotInfo:
    """The current snapshot; without a warehouse, explain how to build one and stop."""
    try:
        snapshot = current_snapshot(path)
    except WarehouseError as exc:
        st.error(f"The warehouse at `{path}` cannot be read: {exc}")
        st.stop()
    if snapshot is not None:
        return snapshot
    st.warning(
        f"There is no warehouse at `{path}` yet. Build it from the bundled data with "
        "`fabricscope init` (or `make app`), or with the button below."
    )
    if st.button("Build the warehouse now", type="primary"):
        with st.spinner("Building the warehouse..."):
            try:
                ensure_warehouse(path)
            except WarehouseError as exc:
                st.error(f"Building the warehouse failed: {exc}")
                st.stop()
        st.rerun()
    st.stop()


def stale_mask(freshness: pd.DataFrame, stale_after_hours: float) -> pd.Series:
    """True for sources whose last good data is older than the threshold, or missing."""
    return freshness["age_hours"].isna() | (freshness["age_hours"] > stale_after_hours)


def status_caption(
    snapshot: SnapshotInfo, freshness: pd.DataFrame, stale_after_hours: float
) -> None:
    """The snapshot date and any stale sources, shown on every page."""
    stale = freshness[stale_mask(freshness, stale_after_hours)]
    st.caption(
        f"Snapshot {snapshot.snapshot_id} · published {snapshot.published_at:%Y-%m-%d %H:%M} UTC · "
        f"{len(freshness)} sources"
    )
    if not stale.empty:
        st.warning(
            "Stale sources (last good data older than "
            f"{stale_after_hours:g} h or none): " + ", ".join(stale["source"])
        )
