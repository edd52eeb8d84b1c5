"""Column settings shared by the pages' tables: labels, units, links to sources."""

from __future__ import annotations

from typing import Any

import streamlit as st

cc = st.column_config
# show the site a link points to, not the whole URL
SITE = r"https?://(?:www\.)?([^/]+).*"


def link(label: str) -> Any:
    return cc.LinkColumn(label, display_text=SITE)


RANKED_COLUMN_CONFIG: dict[str, Any] = {
    "starred": cc.CheckboxColumn("★", help="Starred for the shortlist", width="small"),
    "rank": cc.NumberColumn("rank", width="small"),
    "provider": cc.TextColumn("provider", help="The cloud whose machines run the offer"),
    "offer_label": cc.TextColumn(
        "offer",
        help="GPUs per instance, GPU and fabric as the sources state them; unknown parts say so",
    ),
    "gpu_model": cc.TextColumn("GPU"),
    "gpus_per_node": cc.NumberColumn("GPUs per node", format="%d", width="small"),
    "gpus": cc.NumberColumn("GPUs", format="%d", help="GPUs the job rents", width="small"),
    "sold_and_run_by": cc.TextColumn(
        "who you pay",
        help="Who publishes the price and takes the payment, and, for a reseller or "
        "marketplace, the cloud the machines run on",
    ),
    "instance_type": cc.TextColumn("offer id", help="The offer's name at its seller"),
    "pricing_tier": cc.TextColumn("tier"),
    "regions": cc.TextColumn("regions", help="Every region selling this offer at this price"),
    "time_to_train": cc.TextColumn("time to train", help="A range where the fabric is unknown"),
    "cost": cc.TextColumn(
        "whole cost",
        help="GPUs billed (a reserved term in full), storage and egress at the provider's "
        "stated prices or yours; a range where the fabric is unknown; '+ ?' where a part is "
        "priced by nobody",
    ),
    "cost_parts": cc.TextColumn("where the cost goes", help="At the worse end"),
    "cost_basis": cc.TextColumn(
        "how the cost is made",
        help="GPUs and price, the commitment, storage and egress sizes and prices",
    ),
    "usd_per_million_tokens": cc.NumberColumn("USD per M tokens", format="%.4f"),
    "mfu": cc.NumberColumn("MFU", format="percent", help="Model FLOPs utilisation, worse end"),
    "fabric_estimated_as": cc.TextColumn("fabric (as estimated)"),
    "price_age_days": cc.NumberColumn(
        "price age (days)",
        format="%.0f",
        help="Days since the source observed the price (recordings replayed offline are old)",
    ),
    "multi_node": cc.TextColumn(
        "clusters?", help="Multi-node stated by a source: yes, no or unknown"
    ),
    "transparency_score": cc.ProgressColumn(
        "transparency", min_value=0.0, max_value=1.0, format="%.2f"
    ),
    "price_usd_per_gpu_hour": cc.NumberColumn("USD per GPU-hour", format="%.3f"),
    "price_source_url": link("price source"),
    "price_from": cc.TextColumn(
        "price", help="A list price, or a quote you entered (the Quotes page) and its validity"
    ),
    "price_published_by": cc.TextColumn(
        "price published by", help="The seller's own list, or a third party's copy of it"
    ),
    "price_observed_at": cc.TextColumn("price seen"),
    "fabric_source_url": link("fabric source"),
    "fabric_source_grade": cc.TextColumn(
        "fabric evidence", help="provider, measured or third_party (docs/TRANSPARENCY.md)"
    ),
    "fabric_source_date": cc.TextColumn(
        "fabric dated", help="The date its source states or was read"
    ),
    "pareto": cc.CheckboxColumn("Pareto"),
}
PROVIDER_COLUMNS: dict[str, Any] = {
    "best_rank": cc.NumberColumn("best rank", width="small"),
    "gpu_model": cc.TextColumn("GPU", help="Of the provider's best offer"),
    "gpus_per_node": RANKED_COLUMN_CONFIG["gpus_per_node"],
    "best_offer": cc.TextColumn("best offer", help=RANKED_COLUMN_CONFIG["offer_label"].get("help")),
    "sold_and_run_by": RANKED_COLUMN_CONFIG["sold_and_run_by"],
    "best_offer_id": cc.TextColumn("best offer id"),
    "time_to_train": cc.TextColumn("time to train"),
    "transparency_score": RANKED_COLUMN_CONFIG["transparency_score"],
}
WHAT_IF_COLUMNS: dict[str, Any] = {
    "offer_label": RANKED_COLUMN_CONFIG["offer_label"],
    "gpu_model": cc.TextColumn("GPU"),
    "instance_type": RANKED_COLUMN_CONFIG["instance_type"],
    "gpus_now": cc.NumberColumn("GPUs", format="%d"),
    "fabric_now": cc.TextColumn("fabric now"),
    "fabric_what_if": cc.TextColumn("costed at (what if)"),
    "time_change": cc.NumberColumn("time change", format="percent"),
    "cost_change_usd": cc.NumberColumn("cost change (USD)", format="dollar"),
    "comm_now": cc.NumberColumn("exposed comm now", format="percent"),
    "comm_what_if": cc.NumberColumn("exposed comm (what if)", format="percent"),
    "verdict_what_if": cc.TextColumn("verdict (what if)"),
}
EXCLUDED_COLUMNS: dict[str, Any] = {
    "sold_by": cc.TextColumn(
        "sold by", help="Who publishes the price (a reseller or the provider)"
    ),
    "offer_label": RANKED_COLUMN_CONFIG["offer_label"],
    "gpu_model": RANKED_COLUMN_CONFIG["gpu_model"],
    "reason": cc.TextColumn("why excluded", width="large"),
    "instance_type": RANKED_COLUMN_CONFIG["instance_type"],
    "price_usd_per_gpu_hour": RANKED_COLUMN_CONFIG["price_usd_per_gpu_hour"],
    "price_source_url": link("price source"),
}
