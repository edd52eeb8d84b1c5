"""Shared pieces of the app: where the warehouse is, cached reads, the status line."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from fabricscope.config import ConfigError, load_settings
from fabricscope.ops.refresh import ensure_warehouse
from fabricscope.warehouse.db import SnapshotInfo, WarehouseError, current_snapshot, read_frames
from fabricscope.warehouse.query import QueryLimits


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


def serve_stored() -> bool:
    """The ``serve_stored_rankings`` setting: serve a ranking the refresh stored when it is
    the same answer (fabricscope/rank/materialised.py), or rank every view live."""
    try:
        return load_settings().serve_stored_rankings
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
    """The snapshot on every page in one line. Sources whose last refresh failed (their last
    good data is kept) and sources whose data is old are counted in that line, apart; which
    ones and why open from it, so the answer stays at the top of the page."""
    line = (
        f"Snapshot {snapshot.snapshot_id} · published {snapshot.published_at:%Y-%m-%d %H:%M} "
        f"UTC · {len(freshness)} sources"
    )
    failed = freshness[
        (freshness["last_status"] != "ok") | freshness["age_hours"].isna()
    ].sort_values("source")
    old = freshness[
        stale_mask(freshness, stale_after_hours) & ~freshness["source"].isin(failed["source"])
    ].sort_values("age_hours", ascending=False)
    counts = []
    if not failed.empty:
        counts.append(_counted(len(failed), "failed its last refresh", "failed their last refresh"))
    if not old.empty:
        counts.append(_counted(len(old), "holds old data", "hold old data"))
    if not counts:
        st.caption(line)
        return
    with st.expander(f"{line} · :orange[{' · '.join(counts)}]", icon=":material/warning:"):
        if not failed.empty:
            st.markdown(
                f"**The last refresh failed for {len(failed)} of {len(freshness)} sources**; "
                "their last good data (if any) is kept: "
                + "; ".join(
                    f"{row.source} ({_short(row.last_error) or row.last_status})"
                    for row in failed.itertuples()
                )
            )
        if not old.empty:
            named = ", ".join(
                f"{row.source} ({row.age_hours / 24:,.0f} d)" for row in old.itertuples()
            )
            st.markdown(
                f"**Old data: {len(old)} of {len(freshness)} sources** were observed more than "
                f"{stale_after_hours:g} h ago, oldest first: {named}. Their refreshes "
                "succeeded; the bundled recordings are old by design (refresh live for today's "
                "prices). Each price's age is shown beside it; the Providers page dates every "
                "source."
            )


def _counted(count: int, one: str, many: str) -> str:
    return f"{count} source {one}" if count == 1 else f"{count} sources {many}"


def _short(text: object, limit: int = 80) -> str:
    if not isinstance(text, str) or not text:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# a plan past this many days is no plan a buyer signs: say so above the ranking
YEAR_DAYS = 365.0


def plan_warnings(offers: pd.DataFrame, deadline_days: float | None) -> list[str]:
    """What a buyer must read before the ranking: plans that take over a year (the top one
    above all), and offers kept though their worse end misses the deadline (an unknown
    fabric: only the better end meets it). Days at the worse end, as offers are ordered."""
    if offers.empty:
        return []
    days = offers["time_to_train_h"].astype(float).reset_index(drop=True) / 24
    said = []
    long = days > YEAR_DAYS
    if long.iloc[0]:
        fastest = offers.iloc[int(days.idxmin())]
        said.append(
            f"The top-ranked offer takes {_days_text(days.iloc[0])} to train, and "
            f"{long.sum():,} of the {len(days):,} ranked offers take over a year. The fastest "
            f"takes {_days_text(days.min())} ({fastest['provider']} · "
            f"{fastest['instance_type']}). More GPUs, fewer tokens or a smaller model bring the "
            "job within reach."
        )
    elif long.any():
        said.append(
            f"{long.sum():,} of the {len(days):,} ranked offers take over a year to train (up to "
            f"{_days_text(days.max())}); the top-ranked takes {_days_text(days.iloc[0])}."
        )
    if deadline_days:
        late = days > deadline_days
        if late.any():
            top = " (the top-ranked among them)" if late.iloc[0] else ""
            said.append(
                f"{late.sum():,} of the {len(days):,} ranked offers{top} may miss your "
                f"{deadline_days:,g}-day deadline: only the better end of their range (the "
                "fabric is unknown) meets it; at the worse end they take up to "
                f"{_days_text(days[late].max())}."
            )
    return said


def _days_text(days: float) -> str:
    if days > YEAR_DAYS:
        return f"{days / YEAR_DAYS:.1f} years ({days:,.0f} days)"
    return f"{days:,.1f} days" if days < 10 else f"{days:,.0f} days"
