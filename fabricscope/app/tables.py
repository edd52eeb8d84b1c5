"""Column settings shared by the pages' tables: labels, units, links to sources."""

from __future__ import annotations

from typing import Any

import streamlit as st

cc = st.column_config
# show the site a link points to, not the whole URL
SITE = r"https?://(?:www\.)?([^/]+).*"


def link(label: str) -> Any:
    return cc.LinkColumn(label, display_text=SITE)


# what a training row's error band is (fabricscope/model/error_bands.py)
ERROR_BAND_HELP = (
    "How far the model was off on published runs it was not fitted for (each held out by its "
    "GPU generation and by its software stack): 9 in 10 within this, for the kind of job "
    "named (GPU generation, precision, dense or MoE, stack; a coarser kind where fewer than "
    "10 runs were held out). The time and the GPU time's cost move by as much"
)
# what a served row's error band is (fabricscope/model/error_bands.py, SERVING)
SERVING_ERROR_BAND_HELP = (
    "How far the serving model was off on published serving measurements it was not fitted "
    "for (each held out by its source, its source family and its GPU generation): 9 in 10 of "
    "its output tokens/s per GPU at the latency target within this, for the kind of model "
    "named (GPU generation, dense or MoE, weight precision; a coarser kind where fewer than "
    "10 runs were held out). USD per million output tokens moves as each token's GPU time does"
)
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
    "error_band": cc.TextColumn(
        "error band (held out)",
        help=ERROR_BAND_HELP,
    ),
    "time_band": cc.TextColumn(
        "time to train, with the error band",
        help="From the better fabric end less the error band to the worse end plus it; 'up "
        "to' where the band is 100% or more",
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
# a serving ranking's offers (serve_offers_table), headed as `rank --serve` heads them
TPOT_HELP = (
    "Time per output token reached, in ms; a range where the fabric is unknown and a replica "
    "spans nodes"
)
SERVE_COLUMN_CONFIG: dict[str, Any] = {
    **{
        name: RANKED_COLUMN_CONFIG[name]
        for name in (
            "rank",
            "provider",
            "offer_label",
            "gpu_model",
            "sold_and_run_by",
            "instance_type",
            "pricing_tier",
            "regions",
            "cost_parts",
            "cost_basis",
            "fabric_estimated_as",
            "price_age_days",
            "multi_node",
            "transparency_score",
            "price_usd_per_gpu_hour",
            "price_source_url",
            "price_from",
            "price_published_by",
            "price_observed_at",
            "fabric_source_url",
            "fabric_source_grade",
            "fabric_source_date",
            "pareto",
        )
    },
    "gpus": cc.NumberColumn(
        "GPUs", format="%d", help="GPUs rented: the fewest tried that carry the load", width="small"
    ),
    "gpus_per_node": RANKED_COLUMN_CONFIG["gpus_per_node"],
    "usd_per_million_output_tokens": cc.NumberColumn(
        "USD/M out",
        format="%.3f",
        help="USD per million output tokens: the decoding share of the GPUs' cost",
    ),
    "usd_per_million_input_tokens": cc.NumberColumn(
        "USD/M in",
        format="%.3f",
        help="USD per million prompt tokens: the prefill share of the GPUs' cost",
    ),
    "error_band": cc.TextColumn("error band (held out)", help=SERVING_ERROR_BAND_HELP),
    "tokens_band": cc.TextColumn(
        "output tokens/s per GPU, with the error band",
        help="From the worse fabric end less the error band to the better end plus it; 'at "
        "least' where the band is 100% or more",
    ),
    "usd_band": cc.TextColumn(
        "USD/M out, with the error band",
        help="USD per million output tokens from less the error band to plus it; 'up to' "
        "where the band is 100% or more",
    ),
    "tpot": cc.TextColumn("TPOT (ms)", help=TPOT_HELP),
    "ttft": cc.TextColumn("TTFT (ms)", help="Time to first token reached, in ms"),
    "requests_per_s": cc.NumberColumn(
        "req/s carried",
        format="%.1f",
        help="Requests per second the replicas on these GPUs serve at the targets",
    ),
    "layout": cc.TextColumn(
        "layout", help="Tensor and pipeline parallel sizes of a replica, and its batch"
    ),
    "cost": cc.TextColumn(
        "whole cost (USD)",
        help="The GPUs for the service's hours (a reserved term in full), the weights on "
        "storage, egress given; '+ ?' where a part is priced by nobody",
    ),
    "verdict": cc.TextColumn(
        "verdict", help="Whether the fabric matters: only when a replica spans nodes"
    ),
    "replicas": cc.NumberColumn("replicas", format="%d"),
    "tokens_per_s_per_gpu": cc.NumberColumn("output tokens/s per GPU", format="%.0f"),
    "memory_gb_per_gpu": cc.NumberColumn("GB per GPU", format="%.1f"),
    "nodes": cc.NumberColumn("nodes", format="%d"),
}
PROVIDER_COLUMNS: dict[str, Any] = {
    "best_rank": cc.NumberColumn("best rank", width="small"),
    "gpu_model": cc.TextColumn("GPU", help="Of the provider's best offer"),
    "gpus_per_node": RANKED_COLUMN_CONFIG["gpus_per_node"],
    "best_offer": cc.TextColumn("best offer", help=RANKED_COLUMN_CONFIG["offer_label"].get("help")),
    "sold_and_run_by": RANKED_COLUMN_CONFIG["sold_and_run_by"],
    "best_offer_id": cc.TextColumn("best offer id"),
    "time_to_train": cc.TextColumn("time to train"),
    "error_band": RANKED_COLUMN_CONFIG["error_band"],
    "tpot": cc.TextColumn("TPOT (ms)", help=TPOT_HELP),
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
    "error_band": RANKED_COLUMN_CONFIG["error_band"],
    "comm_now": cc.NumberColumn("exposed comm now", format="percent"),
    "comm_what_if": cc.NumberColumn("exposed comm (what if)", format="percent"),
    "verdict_what_if": cc.TextColumn("verdict (what if)"),
}
# a served model's what-if (rank_data.serve_what_if_table)
SERVE_WHAT_IF_COLUMNS: dict[str, Any] = {
    **{
        name: WHAT_IF_COLUMNS[name]
        for name in ("offer_label", "gpu_model", "instance_type", "fabric_now", "fabric_what_if")
    },
    "gpus_now": SERVE_COLUMN_CONFIG["gpus"],
    "gpus_what_if": cc.NumberColumn(
        "GPUs (what if)",
        format="%d",
        help="GPUs rented with the other fabric: the fewest tried that carry the load",
    ),
    "tokens_now": cc.TextColumn(
        "output tokens/s per GPU now", help="A range where the fabric is unknown"
    ),
    "tokens_what_if": cc.TextColumn("output tokens/s per GPU (what if)"),
    "tokens_change": cc.NumberColumn("tokens/s change", format="percent"),
    "usd_per_million_now": cc.NumberColumn(
        "USD/M out now",
        format="%.3f",
        help=SERVE_COLUMN_CONFIG["usd_per_million_output_tokens"].get("help"),
    ),
    "usd_per_million_what_if": cc.NumberColumn("USD/M out (what if)", format="%.3f"),
    "usd_per_million_change": cc.NumberColumn("USD/M change", format="percent"),
    "tpot_what_if": cc.TextColumn("TPOT (ms, what if)", help=TPOT_HELP),
    "fabric_share_what_if": cc.NumberColumn(
        "fabric's share (what if)",
        format="percent",
        help="Of a decode step (of the time to first token, for a KV cache handed over the "
        "fabric); zero while a replica fits one node",
    ),
    "layout_what_if": cc.TextColumn("layout (what if)"),
    "error_band": SERVE_COLUMN_CONFIG["error_band"],
    "verdict_what_if": WHAT_IF_COLUMNS["verdict_what_if"],
    "what_if_note": cc.TextColumn("not ranked with it because"),
}
# a serving ranking's providers: the band is the serving model's
SERVE_PROVIDER_COLUMNS: dict[str, Any] = {
    **PROVIDER_COLUMNS,
    "error_band": SERVE_COLUMN_CONFIG["error_band"],
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
