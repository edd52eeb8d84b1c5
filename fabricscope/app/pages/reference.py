"""Reference data: GPU specs, fabric classes and providers, each row with its source."""

from __future__ import annotations

import streamlit as st

from fabricscope.app import charts
from fabricscope.app.components import read_snapshot, settings_or_stop, status_caption
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.warehouse import reads

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(
    path,
    {
        "freshness": FRESHNESS_SQL,
        "gpus": reads.sql("app_reference_gpus"),
        "fabric_classes": reads.sql("app_reference_fabric_classes"),
        "providers": reads.sql("app_reference_providers"),
    },
)
st.title("GPUs, fabrics and providers")
status_caption(snapshot, frames["freshness"], stale_after_hours)

gpus = frames["gpus"]
st.subheader(f"GPU models ({len(gpus)})")
st.caption("Dense (no sparsity) peak TFLOP/s as the vendor states them; empty = not published.")
st.dataframe(gpus, hide_index=True, width="stretch")
if gpus[["bf16_dense_tflops", "memory_gb"]].notna().all(axis=1).any():
    st.altair_chart(charts.gpu_memory_compute_scatter(gpus), width="stretch")

st.subheader("Fabric classes")
st.dataframe(frames["fabric_classes"], hide_index=True, width="stretch")

st.subheader("Providers")
st.dataframe(
    frames["providers"],
    hide_index=True,
    width="stretch",
    column_config={
        name: st.column_config.LinkColumn(name)
        for name in ("homepage_url", "pricing_url", "docs_url", "price_api_url")
    },
)
