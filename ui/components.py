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
    """The snapshot date on every page, and two different warnings: sources whose last
    refresh failed (their last good data is kept), and sources whose data is old."""
    st.caption(
        f"Snapshot {snapshot.snapshot_id} · published {snapshot.published_at:%Y-%m-%d %H:%M} UTC · "
        f"{len(freshness)} sources"
    )
    failed = freshness[
        (freshness["last_status"] != "ok") | freshness["age_hours"].isna()
    ].sort_values("source")
    if not failed.empty:
        st.warning(
            f"The last refresh failed for {len(failed)} of {len(freshness)} sources; their last "
            "good data (if any) is kept: "
            + "; ".join(
                f"{row.source} ({_short(row.last_error) or row.last_status})"
                for row in failed.itertuples()
            )
        )
    old = freshness[
        stale_mask(freshness, stale_after_hours) & ~freshness["source"].isin(failed["source"])
    ].sort_values("age_hours", ascending=False)
    if not old.empty:
        oldest = old.head(OLD_NAMED).itertuples()
        named = ", ".join(f"{row.source} ({row.age_hours / 24:,.0f} d)" for row in oldest)
        more = f" and {len(old) - OLD_NAMED} more" if len(old) > OLD_NAMED else ""
        st.warning(
            f"Old data: {len(old)} of {len(freshness)} sources were observed more than "
            f"{stale_after_hours:g} h ago, the oldest {named}{more}. Their refreshes succeeded; "
            "the bundled recordings are old by design (refresh live for today's prices). "
            "Each price's age is shown beside it."
        )


# the old-data warning names the oldest few sources; the Providers page lists every one
OLD_NAMED = 3


def _short(text: object, limit: int = 80) -> str:
    if not isinstance(text, str) or not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"
