"""Offers: every current offer with its GPU, fabric and sources, filterable."""

from __future__ import annotations

import streamlit as st

from pipeline.status import FRESHNESS_SQL
from ui.components import read_snapshot, settings_or_stop, status_caption

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(
    path,
    {
        "freshness": FRESHNESS_SQL,
        "offers": """
            select provider, instance_type, region, gpu_model, gpu_name, gpu_count,
                   pricing_tier, price_basis, price_usd_per_gpu_hour, price_usd_per_hour,
                   fabric_class, fabric_match, fabric_gbps_per_node, rdma, multi_node,
                   price_source_url, price_obtained_by, price_observed_at,
                   fabric_source_url, fabric_evidence, source
            from instance_catalog
            order by price_usd_per_gpu_hour
        """,
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
    f"{len(shown):,} of {len(offers):,} offers from {offers['provider'].nunique()} providers. "
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
        "price_usd_per_gpu_hour": st.column_config.NumberColumn("USD per GPU-hour", format="%.3f"),
        "price_usd_per_hour": st.column_config.NumberColumn("USD per hour", format="%.2f"),
        "price_source_url": st.column_config.LinkColumn("price source"),
        "fabric_source_url": st.column_config.LinkColumn("fabric source"),
    },
)
