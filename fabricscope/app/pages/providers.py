"""Providers: what each one states about its fabric and prices, with evidence, and how fresh."""

from __future__ import annotations

import streamlit as st

from fabricscope.app.components import read_snapshot, settings_or_stop, stale_mask, status_caption
from fabricscope.app.providers_view import (
    answer_matrix,
    evidence_frame,
    questions_frame,
    replies_section,
)
from fabricscope.app.rank_data import rank_inputs
from fabricscope.app.tables import RANKED_COLUMN_CONFIG, link
from fabricscope.evidence.transparency import QUERIES, load_questionnaire
from fabricscope.ops.status import COVERAGE_SQL, FRESHNESS_SQL, GAPS_SQL

path, stale_after_hours, _ = settings_or_stop()
snapshot, frames = read_snapshot(
    path,
    {
        "freshness": FRESHNESS_SQL,
        "facts": QUERIES["facts"],
        "coverage": COVERAGE_SQL,
        "gaps": GAPS_SQL,
    },
)
inputs = rank_inputs(path)  # the transparency answers, read with the ranking's inputs
if inputs.snapshot.snapshot_id != snapshot.snapshot_id:
    st.rerun()

st.title("Providers")
status_caption(snapshot, frames["freshness"], stale_after_hours)

questionnaire = load_questionnaire()
matrix = answer_matrix(inputs.answers, questionnaire)
st.subheader("What each provider states")
st.caption(
    f"The buyer's questionnaire (version {questionnaire.version}) answered from the current "
    "fabric facts and price lists, and from the providers' own replies where you entered them "
    '(marked "(reply)": the provider\'s word, dated the day given). Unknown means nothing '
    "answers it; it never counts as yes. The score is the weighted share answered yes "
    "(partial counts half)."
)
if matrix.empty:
    st.info(
        "No provider has current offers or fabric facts yet. Run `fabricscope refresh "
        "--offline` (or `make app`) to load them."
    )
else:
    st.dataframe(
        matrix,
        hide_index=True,
        width="stretch",
        column_config={"score": RANKED_COLUMN_CONFIG["transparency_score"]},
    )
with st.expander("The questions and why they matter"):
    st.dataframe(questions_frame(questionnaire), hide_index=True, width="stretch")
with st.expander("Enter providers' answers (their replies to the questionnaire)"):
    replies_section(path, inputs.answers)

if not matrix.empty:
    names = dict(zip(matrix["provider"], matrix["name"], strict=True))
    provider = st.selectbox(
        "Evidence for provider",
        list(names),
        format_func=lambda p: f"{names[p]} ({p})",
        key="providers_provider",
    )
    st.subheader(f"{names[provider]}: answers and evidence")
    st.dataframe(
        evidence_frame(inputs.answers, provider),
        hide_index=True,
        width="stretch",
        column_config={"source_url": link("source")},
    )
    st.subheader(f"{names[provider]}: fabric per instance type")
    facts = frames["facts"][frames["facts"]["provider"] == provider]
    if facts.empty:
        st.info("No source states a fabric for this provider's instance types.")
    else:
        st.dataframe(
            facts.drop(columns=["provider"]).sort_values("instance_type"),
            hide_index=True,
            width="stretch",
            column_config={
                "source_url": link("source"),
                "published_benchmark_url": link("benchmark"),
            },
        )

st.subheader("What the ranking can stand on")
figures = frames["coverage"].to_dict("records")[0] if len(frames["coverage"]) else {}
if figures.get("offers"):
    st.caption(
        f"{figures['offers_gpu_identified']:,} of {figures['offers']:,} offers have an identified "
        f"GPU; {figures['cluster_offers_with_fabric']:,} of {figures['cluster_offers']:,} offers "
        "that could form a cluster (8 or more GPUs, or stated multi-node) have a fabric class, "
        f"from {figures['providers_with_offers']} providers. The ones without, and why:"
    )
    st.dataframe(frames["gaps"], hide_index=True, width="stretch", key="providers_gaps")

st.subheader("Freshness of every source")
freshness = frames["freshness"].copy()
if freshness.empty:
    st.info("No scrape has run yet.")
else:
    freshness.insert(1, "stale", stale_mask(freshness, stale_after_hours))
    st.dataframe(freshness, hide_index=True, width="stretch")
