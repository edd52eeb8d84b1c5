"""Overview: what the warehouse holds, how fresh each source is."""

from __future__ import annotations

import streamlit as st

from fabricscope.app.components import read_snapshot, settings_or_stop, status_caption
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.warehouse import reads

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(
    path,
    {
        "freshness": FRESHNESS_SQL,
        "counts": reads.sql("app_overview_counts"),
        "fabric_classes": reads.sql("app_overview_fabric_classes"),
    },
)

st.title("fabricscope")
st.markdown(
    "Compare GPU clouds by **time-to-train and cost for your workload**, with the network fabric "
    "that connects the nodes taken into account. For multi-node training the fabric decides "
    "whether the GPUs you pay for stay busy; for one node or for inference it barely matters."
)
status_caption(snapshot, frames["freshness"], stale_after_hours)

counts = frames["counts"].iloc[0]
columns = st.columns(5)
columns[0].metric("Current offers", int(counts["offers"]))
columns[1].metric("Providers priced", int(counts["priced_providers"]))
columns[2].metric("Fabric facts", int(counts["fabric_facts"]))
columns[3].metric("GPU models known", int(counts["gpu_models"]))
columns[4].metric("Providers tracked", int(counts["providers"]))

st.subheader("Sources")
if frames["freshness"].empty:
    st.info(
        "No scrape has run yet: the warehouse holds the reference data (GPU specs, fabric "
        "classes, providers). Offers arrive with `fabricscope refresh`."
    )
else:
    st.dataframe(frames["freshness"], hide_index=True, width="stretch")

st.subheader("Fabric classes the model knows")
st.caption(
    "Latency and the share of line rate each class holds as a job grows. Rows marked as prior "
    "hold at least one engineering placeholder with no published source, to be replaced by "
    "measurements."
)
st.dataframe(frames["fabric_classes"], hide_index=True, width="stretch")
