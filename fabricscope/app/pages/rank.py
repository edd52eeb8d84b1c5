"""Rank: which current offers finish this training job cheapest or fastest, and how sure; in
Serve mode, which serve a model to a load at its latency targets for the least per token."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from fabricscope.app import charts, rank_form, view_state
from fabricscope.app.components import (
    plan_warnings,
    read_snapshot,
    settings_or_stop,
    status_caption,
)
from fabricscope.app.rank_data import (
    counts_tried,
    error_band_notes,
    offers_table,
    providers_table,
    rank_inputs,
    ranked,
    serve_offers_table,
    serving_band_caveat,
    step_parts,
    what_if,
    what_if_shown,
)
from fabricscope.app.tables import (
    EXCLUDED_COLUMNS,
    PROVIDER_COLUMNS,
    RANKED_COLUMN_CONFIG,
    SERVE_COLUMN_CONFIG,
    SERVE_PROVIDER_COLUMNS,
    SERVE_WHAT_IF_COLUMNS,
    WHAT_IF_COLUMNS,
)
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.rank.estimators import serving_note

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(path, {"freshness": FRESHNESS_SQL})
inputs = rank_inputs(path)
if inputs.snapshot.snapshot_id != snapshot.snapshot_id:
    st.rerun()  # published between the two reads: start the page again on the new one

# the last serving request that could be ranked: a field changed to a value the model refuses
# says why in one line, and the ranking it had stays below
LAST_SERVING = "rk_last_serving_request"
SERVE_WHAT_IF = (
    "A served model crosses the fabric only where a replica spans nodes (a model too large "
    "for one, a MoE model's experts spread over nodes, or prefill and decode apart on "
    "different nodes): choose a fabric to see what those offers would serve on it, and for "
    "how much per million tokens."
)

view, problems = view_state.current_view()
entered = view_state.entering("rank")
rank_form.seed(view, force=entered)
view = rank_form.render(view, inputs.catalog)
view_state.remember(view)

st.title("Rank offers for serving a model" if view.serving else "Rank offers for a training job")
status_caption(snapshot, frames["freshness"], stale_after_hours)
for problem in problems:
    st.warning(f"The link had a value that could not be restored: {problem}")
try:
    request = view_state.request_of(view)
except view_state.InputError as exc:
    st.error(f"Cannot rank these inputs: {exc}")
    if not view.serving or LAST_SERVING not in st.session_state:
        st.stop()
    request = st.session_state[LAST_SERVING]
    st.caption("Below: the last ranking these inputs made, until they make another.")
else:
    if view.serving:
        st.session_state[LAST_SERVING] = request

result = ranked(inputs, path, request)
offers, excluded = result.offers, result.excluded
job = request.workload
tiers = ", ".join(t.value for t in request.tiers)
if view.serving:
    latency = " (the lowest time per output token)" if request.objective == "time" else ""
    st.markdown(
        f"**{job.name}**: {job.architecture.name}, {job.architecture.total_params / 1e9:,.1f}B "
        f"parameters, {job.weights} weights, {job.kv_cache} KV cache; on "
        f"{counts_tried(request.gpu_counts)}; {tiers} prices; ranked by "
        f"{request.objective}{latency}."
    )
else:
    st.markdown(
        f"**{job.name}**: {job.total_params / 1e9:,.1f}B parameters, {job.tokens / 1e9:,.0f}B "
        f"tokens, {job.precision_label}; on {', '.join(map(str, request.gpu_counts))} GPUs; "
        f"{tiers} prices; ranked by {request.objective}."
    )
columns = st.columns(4)
columns[0].metric("Offers ranked", f"{len(offers):,}")
columns[1].metric("Excluded", f"{len(excluded):,}")
columns[2].metric("Providers", f"{offers['provider'].nunique():,}")
columns[3].metric("Hardware profiles modelled", f"{result.profiles_estimated:,}")

if result.stored_at is not None:
    st.caption(
        f"Served from the ranking the last refresh stored "
        f"({result.stored_at:%Y-%m-%d %H:%M} UTC) over these very offers with this model: "
        "ranking it again gives the same rows."
    )

if offers.empty and result.catalog.empty:
    st.info(
        "No offer qualifies: the warehouse holds no offers yet. Run `fabricscope refresh "
        "--offline` (or `make app`) to load the bundled recordings."
    )
elif offers.empty:
    # the reason most offers were left out, in its own words (each is listed below): among
    # those estimated for the job when any were, not those of a tier or GPU not asked for
    planned = excluded[excluded["gpus"].notna()]
    considered = planned if len(planned) else excluded
    # reasons alike but for their figures count as one; one of them stands for the rest
    kinds = considered["reason"].str.replace(r"[\d][\d,.]*", "#", regex=True)
    common = kinds.value_counts()
    example = considered["reason"][kinds == common.index[0]].iloc[0] if len(common) else ""
    st.info(
        f"No offer qualifies. Most were left out because: {example} "
        f"({common.iloc[0]:,} of {len(considered):,} alike). Loosen the constraints or change "
        "the GPU "
        "count; every reason is listed below."
        if len(common)
        else "No offer qualifies. Loosen the constraints or change the GPU count."
    )
else:
    if view.serving:
        st.caption(serving_note(job))
        caveat = serving_band_caveat(offers)
        bands = [*error_band_notes(offers, serving=True), *([caveat] if caveat else [])]
        if bands:
            st.caption(
                "  \n".join(
                    [
                        "How far to trust the tokens/s and the price per token (the error band "
                        "column: the serving model held out on published serving runs, "
                        "docs/MODEL.md):",
                        *(f"- {note[0].upper()}{note[1:]}." for note in bands),
                    ]
                )
            )
    else:
        for warning in plan_warnings(offers, view.deadline_days):
            st.warning(warning, icon=":material/schedule:")
        st.caption(
            "Where a provider has not stated its fabric (or its bandwidth), time and cost are a "
            "range from plain Ethernet to InfiniBand (or 50 to 400 Gb/s per GPU) and offers are "
            "ordered by the worse end. MFU, the verdict and the step-time parts are those of "
            "the worse end. Prices and fabric facts link to their source, with the date "
            "observed."
        )
        bands = error_band_notes(offers)
        if bands:
            st.caption(
                "  \n".join(
                    [
                        "How far to trust the time and cost (the error band column: the model "
                        "held out on published runs, docs/MODEL.md):",
                        *(f"- {note[0].upper()}{note[1:]}." for note in bands),
                    ]
                )
            )
    st.subheader("Providers")
    st.dataframe(
        providers_table(result.providers, serving=view.serving),
        hide_index=True,
        width="stretch",
        column_config=SERVE_PROVIDER_COLUMNS if view.serving else PROVIDER_COLUMNS,
    )

    st.subheader("Offers")
    st.caption(
        f"Tick the box at the start of a row to star the offer for the Shortlist (at most "
        f"{view_state.MAX_STARS}); click a column's header to sort by it."
    )
    if view.serving:
        table, config = serve_offers_table(offers), SERVE_COLUMN_CONFIG
    else:
        table = offers_table(offers, view.starred).drop(columns=["starred"])
        config = RANKED_COLUMN_CONFIG
    view = rank_form.star_grid(table, view, config, reseed=entered)
    view_state.remember(view)
    elsewhere = set(view.starred) - set(offers["offer_key"])
    if view.starred:
        not_ranked = f", {len(elsewhere)} of them not in this ranking" if elsewhere else ""
        st.page_link(
            "pages/shortlist.py",
            label=f"Open the shortlist ({len(view.starred)} starred{not_ranked})",
            icon="⭐",
        )

if not offers.empty:
    # one chart a row: beside another, a legend of twenty providers leaves the plot a sliver
    st.subheader("Time per output token against cost" if view.serving else "Time against cost")
    axis = charts.TIME_PER_OUTPUT_TOKEN if view.serving else charts.TIME_TO_TRAIN
    st.altair_chart(
        charts.time_cost_scatter(offers, inputs.catalog["provider"].dropna(), axis),
        width="stretch",
    )
    spans = " and a replica spans nodes" if view.serving else ""
    st.caption(
        "Each point is an offer at its worse end; a segment runs to its better end where "
        f"the fabric is unknown{spans}. The dashed line joins the offers no other beats on "
        "both. Each provider keeps its colour in every view."
    )
if not offers.empty and not view.serving:
    st.subheader("Where a training step goes")
    top = len(offers)
    if len(offers) > 1:
        top = st.slider("Offers shown", 1, min(30, len(offers)), min(10, len(offers)))
    st.altair_chart(charts.step_time_bars(step_parts(offers, top)), width="stretch")
    st.caption("Exposed communication is what overlapping with compute did not hide.")

if not offers.empty:
    st.subheader("What if the fabric were different")
    if view.serving:
        st.caption(SERVE_WHAT_IF)
    fabric = rank_form.what_if_choice()
    view = replace(view, what_if=fabric)
    view_state.remember(view)
    if fabric:
        table, caption = what_if_shown(result, what_if(inputs, path, request, fabric))
        config = SERVE_WHAT_IF_COLUMNS if view.serving else WHAT_IF_COLUMNS
        st.dataframe(table, hide_index=True, width="stretch", column_config=config)
        st.caption(caption)

with st.expander(f"Excluded offers ({len(excluded):,}) and why"):
    st.dataframe(excluded, hide_index=True, width="stretch", column_config=EXCLUDED_COLUMNS)
