"""Offers: every current offer with its GPU, fabric and sources, filterable."""

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
        "offers": reads.sql("app_offers"),  # ordered for a training buyer
    },
)
st.title("Offers")
status_caption(snapshot, frames["freshness"], stale_after_hours)
offers = frames["offers"]
if offers.empty:
    st.info("No offers yet. Run `fabricscope refresh --offline` (or `make app`) to load them.")
    st.stop()

left, middle, right = st.columns(3)
providers = left.multiselect("Provider", sorted(offers["provider"].unique()))
models = middle.multiselect("GPU model", sorted(offers["gpu_model"].dropna().unique()))
tiers = right.multiselect("Tier", sorted(offers["pricing_tier"].unique()))
shown = offers
if providers:
    shown = shown[shown["provider"].isin(providers)]
if models:
    shown = shown[shown["gpu_model"].isin(models)]
if tiers:
    shown = shown[shown["pricing_tier"].isin(tiers)]

st.caption(
    f"{len(shown):,} of {len(offers):,} offers from {offers['provider'].nunique()} providers, "
    "sorted for training: on-demand prices first (then reserved, then spot), offers a source "
    "states can run multi-node first, and within those the cheapest compute first, in USD per "
    "PFLOP-hour of the GPU's dense BF16 peak. Click a column's header to sort by it. "
    "An empty GPU model means the provider's name for it is ambiguous; an empty fabric means "
    "no source states it; fabric_match says whether the fabric was stated for this instance "
    "type or for the provider's GPU family. Prices are as observed on the date shown, with "
    "their source."
)
st.dataframe(
    shown,
    hide_index=True,
    width="stretch",
    column_config={
        "gpu_model": st.column_config.TextColumn("GPU"),
        "gpu_count": st.column_config.NumberColumn("GPUs/node", format="%d"),
        "pricing_tier": st.column_config.TextColumn("tier"),
        "instance_type": st.column_config.TextColumn("offer", width="medium"),
        "multi_node": st.column_config.TextColumn(
            "multi-node?", help="Whether a source states the offer runs multi-node jobs"
        ),
        "price_usd_per_gpu_hour": st.column_config.NumberColumn("USD/GPU-h", format="%.3f"),
        "usd_per_bf16_pflop_hour": st.column_config.NumberColumn(
            "USD/BF16 PFLOP-h",
            format="%.2f",
            help="The price per GPU-hour over the GPU's dense BF16 peak (PFLOP/s): what an "
            "hour of compute costs, before the fabric and the model decide how much is used",
        ),
        "price_usd_per_hour": st.column_config.NumberColumn("USD per hour", format="%.2f"),
        "price_source_url": st.column_config.LinkColumn("price source"),
        "fabric_source_url": st.column_config.LinkColumn("fabric source"),
    },
)
