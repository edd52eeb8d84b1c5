"""Shortlist: the starred offers side by side, notes on each, and the files to hand on."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from fabricscope.app import view_state
from fabricscope.app.charts import curve_chart
from fabricscope.app.components import read_snapshot, settings_or_stop, status_caption
from fabricscope.app.rank_data import (
    counts_tried,
    offer_label,
    offers_table,
    rank_inputs,
    ranked,
    serve_offers_table,
    shortlist,
    shortlist_downloads,
)
from fabricscope.app.shortlist_files import merge_notes, notes_frame
from fabricscope.app.tables import RANKED_COLUMN_CONFIG, SERVE_COLUMN_CONFIG
from fabricscope.ops.status import FRESHNESS_SQL
from fabricscope.procurement import shortlist as shortlisting

NOTES = "shortlist_notes"
STARS = "sl_starred"

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(path, {"freshness": FRESHNESS_SQL})
inputs = rank_inputs(path)
if inputs.snapshot.snapshot_id != snapshot.snapshot_id:
    st.rerun()

st.title("Shortlist")
status_caption(snapshot, frames["freshness"], stale_after_hours)
view, problems = view_state.current_view()
for problem in problems:
    st.warning(f"The link had a value that could not be restored: {problem}")
if view_state.entering("shortlist") or STARS not in st.session_state:
    st.session_state[STARS] = list(view.starred)
view_state.remember(view)

try:
    request = view_state.request_of(view)
except view_state.InputError as exc:
    st.error(f"The ranking behind this shortlist cannot be built: {exc}")
    st.stop()
result = ranked(inputs, path, request)
labels = {r["offer_key"]: offer_label(r) for r in result.offers.to_dict("records")}
kept = st.multiselect(
    "Starred offers",
    list(view.starred),
    key=STARS,
    format_func=lambda key: labels.get(key, f"{key} (not in this ranking)"),
    help="Remove an offer here; star more on the Rank page.",
)
view = replace(view, starred=tuple(kept))
view_state.remember(view)
st.page_link("pages/rank.py", label="Star offers on the Rank page", icon="🏁")
if not view.starred:
    st.info("Nothing starred yet: star offers on the Rank page and they appear here.")
    st.stop()

ranked_keys = set(labels)
gone = [key for key in view.starred if key not in ranked_keys]
if gone:
    try:
        shortlisting.from_result(result, offer_keys=gone)
    except shortlisting.ShortlistError as exc:
        st.warning(f"Starred, but {exc}. They are left out below.")
keys = [key for key in view.starred if key in ranked_keys]
if not keys:
    st.stop()
chosen = shortlist(inputs, path, request, keys)

job = request.workload
counts = request.gpu_counts
on = counts_tried(counts) if view.serving else f"{', '.join(map(str, counts))} GPUs"
st.markdown(
    f"**{job.name}** on {on}, ranked by "
    f"{request.objective}, from snapshot {chosen.snapshot_id}: {len(chosen.rows)} offers."
)
if view.serving:
    table, config = serve_offers_table(chosen.rows), SERVE_COLUMN_CONFIG
else:
    table, config = offers_table(chosen.rows, keys).drop(columns=["starred"]), RANKED_COLUMN_CONFIG
st.dataframe(table, hide_index=True, width="stretch", column_config=config)

st.subheader("Side by side")
if len(chosen.rows) < 2:
    st.caption("Star two to four offers to compare them in columns.")
else:
    if len(chosen.rows) > shortlisting.SIDE_BY_SIDE_MAX:
        st.caption(
            f"The first {shortlisting.SIDE_BY_SIDE_MAX} by rank; the workbook's "
            "'side by side' sheet holds the same."
        )
    st.dataframe(shortlisting.side_by_side(chosen), hide_index=True, width="stretch", key="sl_side")

st.subheader("How time and cost move")
if view.serving:
    st.caption(
        "No curve for a served model: each offer is ranked at the fewest GPUs that carry the "
        "load, and the fabric enters only where a replica spans nodes (below)."
    )
elif chosen.curves.empty:
    st.caption("No curve: the shortlisted offers run on no other GPU count.")
else:
    st.caption(
        "Each starred offer ranked again at other GPU counts (whole nodes) and, for multi-node "
        "jobs, with other inter-node bandwidths per GPU on its own fabric class: what more GPUs "
        "or a faster fabric is worth for this job (worse ends, whole costs; the memo and the "
        "workbook's 'curves' sheet hold the numbers)."
    )
    left, right = st.columns(2)
    left.altair_chart(curve_chart(chosen.curves, "gpus", "days"), width="stretch")
    right.altair_chart(curve_chart(chosen.curves, "gpus", "cost"), width="stretch")
    if (chosen.curves["axis"] == "gbps_per_gpu").any():
        left.altair_chart(curve_chart(chosen.curves, "gbps_per_gpu", "days"), width="stretch")
        right.altair_chart(curve_chart(chosen.curves, "gbps_per_gpu", "cost"), width="stretch")

st.subheader("Notes")
notes: dict[str, str] = st.session_state.setdefault(NOTES, {})
edited = st.data_editor(
    notes_frame(chosen, notes),
    hide_index=True,
    width="stretch",
    disabled=[c for c in notes_frame(chosen, notes).columns if c != "note"],
    column_config={"note": st.column_config.TextColumn("note", width="large")},
    key="sl_notes_editor",
)
notes = merge_notes(notes, edited)
st.session_state[NOTES] = notes

st.subheader("Downloads")
files = shortlist_downloads(inputs, path, request, keys, notes)
left, middle, right, fourth = st.columns(4)
left.download_button(
    "CSV (the ranking rows)",
    files.csv,
    file_name="fabricscope-shortlist.csv",
    mime="text/csv",
    key="sl_csv",
    on_click="ignore",
)
middle.download_button(
    "XLSX workbook",
    files.xlsx,
    file_name="fabricscope-shortlist.xlsx",
    mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    key="sl_xlsx",
    on_click="ignore",
)
right.download_button(
    "Markdown memo",
    files.memo,
    file_name="fabricscope-shortlist.md",
    mime="text/markdown",
    key="sl_memo",
    on_click="ignore",
)
fourth.download_button(
    "Answers template (CSV)",
    files.answers_template,
    file_name="fabricscope-shortlist-rfi-answers.csv",
    mime="text/csv",
    key="sl_answers",
    on_click="ignore",
    help="The open questions, one row per provider: send it with the memo, fill in the "
    "replies, and import them on the Providers page or with `fabricscope answers import`.",
)

st.subheader("Questions still open per provider")
for provider, questions in chosen.open_questions.items():
    score = chosen.scores.get(provider)
    title = f"{provider}: {len(questions)} open" + (
        f" (transparency {score.score:.2f})" if score else ""
    )
    with st.expander(title):
        if not questions:
            st.write("Every question is answered with evidence.")
        for number, question in enumerate(questions, start=1):
            st.markdown(f"{number}. {question.text}  \n   *{question.why}*")

st.subheader("What the fabric is worth for these offers")
st.dataframe(chosen.sensitivity, hide_index=True, width="stretch")
with st.expander("The memo"):
    st.markdown(files.memo)
