"""The Rank page's inputs: the mode (train or serve), a preset or custom workload (a job to
train or a model to serve), GPU counts, tiers, objective, constraints and the job's side of
the whole cost, rendered in the sidebar and read back into a ``RankView``.

Serve mode asks for a serving preset or its fields instead of a training job, and has no
deadline (its latency targets stand in for one); the other inputs are the same widgets.

Widgets are seeded from the view (the URL on a first visit, else the session) whenever the
page is entered, so the same link gives the same inputs, and the Shortlist page's changes to
the stars show when the user comes back. Stars are ticked in the ranked offers' grid.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from fabricscope.app.view_state import (
    FABRIC_CLASSES,
    FP8_RECIPE_HELP,
    MAX_STARS,
    MODES,
    OBJECTIVES,
    SERVE,
    SERVING_FIELDS,
    STACK_HELP,
    TIERS,
    WORKLOAD_CHOICES,
    WORKLOAD_FIELDS,
    RankView,
    ServingFields,
    WorkloadFields,
    remember,
    serving_choices,
    serving_preset,
    starred_after,
)
from fabricscope.model.workloads import preset, presets, serving_presets

ANY = "(any)"
STAR_GRID = "rk_star_grid_"
CAPPED = "rk_stars_capped"
NO_WHAT_IF = "(choose a fabric)"
KEY = {
    "mode": "rk_mode",
    "serve_preset": "rk_serve_preset",
    "serve_custom": "rk_serve_custom",
    "serve_gpus": "rk_serve_gpus",
    "preset": "rk_preset",
    "custom": "rk_custom",
    "gpus": "rk_gpus",
    "tiers": "rk_tiers",
    "objective": "rk_objective",
    "time_weight": "rk_time_weight",
    "gpu_models": "rk_gpu_models",
    "regions": "rk_regions",
    "max_budget_usd": "rk_budget",
    "deadline_days": "rk_deadline_days",
    "max_price_age_days": "rk_max_price_age",
    "min_fabric": "rk_min_fabric",
    "multi_node": "rk_multi_node",
    "dataset_tb": "rk_dataset_tb",
    "checkpoints_kept": "rk_checkpoints_kept",
    "egress_tb": "rk_egress_tb",
    "storage_usd_per_tb_month": "rk_storage_price",
    "egress_usd_per_gb": "rk_egress_price",
    "support_pct": "rk_support_pct",
    "include_stated_support": "rk_stated_support",
    "what_if": "rk_what_if",
}
FIELD_KEY = {name: f"rk_w_{name}" for name in WORKLOAD_FIELDS}
SERVE_FIELD_KEY = {name: f"rk_s_{name}" for name in SERVING_FIELDS}
MODE_LABELS = {"train": "Train", "serve": "Serve"}
SERVE_FIELD_HELP = {
    "disaggregated": "Prefill GPUs hand each request's KV cache to decode GPUs: over NVLink "
    "inside a node, else over the fabric. Decoding is never interrupted by a prompt.",
    "attention_data_parallel": "A MoE replica's GPUs split only the routed experts and each "
    "runs attention for its own sequences; a model too large for one node may then spread "
    "its experts over nodes, their all-to-all over the fabric.",
}
NO_DEADLINE = (
    "No deadline when serving: the latency targets (time to first token, time per output "
    "token) stand in for one."
)


def _widget_values(view: RankView) -> dict[str, Any]:
    fields = view.custom or WorkloadFields.of(preset(view.preset))
    serving = view.serve_custom or ServingFields.of(serving_preset(view.serve_preset))
    values: dict[str, Any] = {
        KEY["mode"]: view.mode,
        KEY["serve_preset"]: view.serve_preset,
        KEY["serve_custom"]: view.serve_custom is not None,
        KEY["serve_gpus"]: view.serve_gpus,
        KEY["preset"]: view.preset,
        KEY["custom"]: view.custom is not None,
        KEY["gpus"]: view.gpus,
        KEY["tiers"]: list(view.tiers),
        KEY["objective"]: view.objective,
        KEY["time_weight"]: view.time_weight,
        KEY["gpu_models"]: list(view.gpu_models),
        KEY["regions"]: list(view.regions),
        KEY["max_budget_usd"]: view.max_budget_usd,
        KEY["deadline_days"]: view.deadline_days,
        KEY["max_price_age_days"]: view.max_price_age_days,
        KEY["min_fabric"]: view.min_fabric or ANY,
        KEY["multi_node"]: view.multi_node,
        KEY["dataset_tb"]: view.dataset_tb,
        KEY["checkpoints_kept"]: view.checkpoints_kept,
        KEY["egress_tb"]: view.egress_tb,
        KEY["storage_usd_per_tb_month"]: view.storage_usd_per_tb_month,
        KEY["egress_usd_per_gb"]: view.egress_usd_per_gb,
        KEY["support_pct"]: view.support_pct,
        KEY["include_stated_support"]: view.include_stated_support,
        KEY["what_if"]: view.what_if or NO_WHAT_IF,
    }
    values.update({FIELD_KEY[name]: getattr(fields, name) for name in WORKLOAD_FIELDS})
    values.update(
        {
            # a text field holds "" for none
            SERVE_FIELD_KEY[name]: (getattr(serving, name) or "")
            if kind is list
            else getattr(serving, name)
            for name, (_, kind, _) in SERVING_FIELDS.items()
        }
    )
    return values


def seed(view: RankView, force: bool) -> None:
    """Put the view into the widgets' state: all of it when ``force``, else what is missing."""
    for key, value in _widget_values(view).items():
        if force or key not in st.session_state:
            st.session_state[key] = value


def _reset_custom_fields() -> None:
    """A new preset brings its own shape: the custom fields start again from it."""
    fields = WorkloadFields.of(preset(st.session_state[KEY["preset"]]))
    for name in WORKLOAD_FIELDS:
        st.session_state[FIELD_KEY[name]] = getattr(fields, name)


def _reset_serving_fields() -> None:
    """A new serving preset brings its own model and load: the fields start again from it."""
    fields = ServingFields.of(serving_preset(st.session_state[KEY["serve_preset"]]))
    for name in SERVING_FIELDS:
        st.session_state[SERVE_FIELD_KEY[name]] = getattr(fields, name)


def _options(values: Iterable[Any], keep: Iterable[str]) -> list[str]:
    """Choices from the data, plus what the view already holds (a link may name others)."""
    return sorted({str(v) for v in values if not pd.isna(v)} | set(keep))


def render(view: RankView, catalog: pd.DataFrame) -> RankView:
    """The sidebar form; returns the view its widgets now describe (stars unchanged). The
    other mode's inputs are kept as the view holds them."""
    bar = st.sidebar
    mode = bar.radio(
        "Mode",
        list(MODES),
        key=KEY["mode"],
        format_func=MODE_LABELS.__getitem__,
        horizontal=True,
        help="Train: the time and cost of a training job. Serve: the cost per million tokens "
        "of serving a model to a load at latency targets.",
    )
    workload = _serving_inputs() if mode == SERVE else _training_inputs()

    bar.header("Cluster and prices")
    if mode == SERVE:
        workload["serve_gpus"] = bar.text_input(
            "GPU count",
            key=KEY["serve_gpus"],
            help="A count (8), a list (8,16,64) or a range (1-1024: its powers of two and "
            "both ends); each offer is ranked at the fewest GPUs tried that carry the load.",
        )
    else:
        workload["gpus"] = bar.text_input(
            "GPU count",
            key=KEY["gpus"],
            help="A count (64), a list (8,16,64) or a range (64-512: its powers of two and "
            "both ends); each offer keeps the count that serves the objective best.",
        )
    return _shared_inputs(replace(view, mode=mode, **workload), catalog)


def _serving_inputs() -> dict[str, Any]:
    """A serving preset (its description and source said), or its fields changed."""
    bar = st.sidebar
    bar.header("Model to serve")
    known = serving_presets()
    chosen = bar.selectbox(
        "Serving preset",
        list(known),
        key=KEY["serve_preset"],
        format_func=lambda n: f"{n}: {known[n].get('description', '')}",
        on_change=_reset_serving_fields,
    )
    bar.caption(f"{known[chosen].get('description', '')}. Source: {known[chosen]['source']}")
    custom = None
    if bar.toggle("Change the model, the load or the targets", key=KEY["serve_custom"]):
        choices = serving_choices()
        values: dict[str, Any] = {}
        for name, (label, kind, optional) in SERVING_FIELDS.items():
            key = SERVE_FIELD_KEY[name]
            if kind is str:
                values[name] = bar.selectbox(label, list(choices[name]), key=key)
            elif kind is bool:
                values[name] = bar.checkbox(label, key=key, help=SERVE_FIELD_HELP.get(name))
            elif kind is list:  # free text (a mix), empty for none
                text = bar.text_input(
                    label, key=key, placeholder="e.g. 500/100:0.75,8000/1000:0.25"
                )
                values[name] = text.strip() or None
            elif kind is int:
                # 0 is let through for the model to refuse, in its own words
                values[name] = int(bar.number_input(label, min_value=0, step=1, key=key))
            elif optional:  # left empty: no load, or no target
                number = bar.number_input(
                    label, min_value=0.0, value=None, step=1.0, key=key, placeholder="none"
                )
                values[name] = None if number is None else float(number)
            else:
                values[name] = float(bar.number_input(label, min_value=0.0, step=1.0, key=key))
        custom = ServingFields(**values)
    return {"serve_preset": chosen, "serve_custom": custom}


def _training_inputs() -> dict[str, Any]:
    """A training preset, or a few of its fields changed."""
    bar = st.sidebar
    bar.header("Workload")
    names = list(presets())
    bar.selectbox(
        "Preset",
        names,
        key=KEY["preset"],
        format_func=lambda n: f"{n}: {presets()[n].get('description', '')}",
        on_change=_reset_custom_fields,
    )
    custom_on = bar.toggle("Change the model or the data", key=KEY["custom"])
    custom = None
    if custom_on:
        values: dict[str, Any] = {}
        for name, (label, kind) in WORKLOAD_FIELDS.items():
            key = FIELD_KEY[name]
            if kind is str:
                values[name] = bar.selectbox(
                    label,
                    list(WORKLOAD_CHOICES[name]),
                    key=key,
                    help={"stack": STACK_HELP, "fp8_recipe": FP8_RECIPE_HELP}.get(name),
                )
            elif kind is int:
                values[name] = int(bar.number_input(label, min_value=1, step=1, key=key))
            else:
                values[name] = float(
                    bar.number_input(label, min_value=0.001, format="%.3f", key=key)
                )
        custom = WorkloadFields(**values)
    return {"preset": st.session_state[KEY["preset"]], "custom": custom}


def _shared_inputs(view: RankView, catalog: pd.DataFrame) -> RankView:
    """Tiers, objective, constraints and the whole cost: the same in both modes."""
    bar = st.sidebar
    tiers = bar.multiselect("Pricing tiers", list(TIERS), key=KEY["tiers"])
    objective = bar.radio("Rank by", list(OBJECTIVES), key=KEY["objective"], horizontal=True)
    time_weight = view.time_weight
    if objective == "blend":
        time_weight = bar.slider(
            "Weight of time (against cost)", 0.0, 1.0, step=0.05, key=KEY["time_weight"]
        )

    bar.header("Constraints")
    gpu_models = bar.multiselect(
        "GPU models",
        _options(catalog.get("gpu_model", []), view.gpu_models),
        key=KEY["gpu_models"],
        placeholder="any",
    )
    regions = bar.multiselect(
        "Regions",
        _options(catalog.get("region", []), view.regions),
        key=KEY["regions"],
        placeholder="any",
    )
    budget = bar.number_input(
        "Budget (USD)", min_value=0.0, value=None, step=1000.0, key=KEY["max_budget_usd"]
    )
    deadline = view.deadline_days
    if view.serving:
        bar.caption(NO_DEADLINE)
    else:
        deadline = bar.number_input(
            "Deadline (days)", min_value=0.0, value=None, step=1.0, key=KEY["deadline_days"]
        )
    max_age = bar.number_input(
        "Price at most this old (days)",
        min_value=0.0,
        value=None,
        step=30.0,
        key=KEY["max_price_age_days"],
        help="Days since the source observed the price; the recordings bundled for offline "
        "use are months to years old.",
    )
    min_fabric = bar.selectbox(
        "Fabric at least",
        [ANY, *FABRIC_CLASSES],
        key=KEY["min_fabric"],
        help="An unknown fabric never meets a minimum.",
    )
    multi_node = bar.checkbox("Multi-node must be stated", key=KEY["multi_node"])
    costs = _whole_cost_inputs(view)
    return replace(
        view,
        tiers=tuple(tiers),
        objective=objective,
        time_weight=float(time_weight),
        gpu_models=tuple(gpu_models),
        regions=tuple(regions),
        max_budget_usd=budget or None,
        deadline_days=deadline or None,
        max_price_age_days=max_age or None,
        min_fabric=None if min_fabric == ANY else min_fabric,
        multi_node=bool(multi_node),
        **costs,
    )


def _whole_cost_inputs(view: RankView) -> dict[str, Any]:
    """The job's side of the whole cost (fabricscope/rank/costs.py), folded: left alone,
    the request's ``costs`` keep their defaults. A served model keeps no checkpoints."""
    fold = st.sidebar.expander("Whole cost: data, downloads, support", expanded=False)
    if view.serving:
        fold.caption(
            "Serving: storage holds the served weights (and the data given here), for the "
            "service's hours; nothing is downloaded unless given (answers leave as API "
            "responses, which no price list covers); no checkpoints are kept."
        )
    dataset_tb = fold.number_input(
        "Dataset kept on storage (TB)",
        min_value=0.0,
        value=None,
        step=1.0,
        key=KEY["dataset_tb"],
        help="Training data kept on the provider's storage while the job runs, costed with "
        "the checkpoints. Not given: only the checkpoints are stored.",
    )
    checkpoints = view.checkpoints_kept
    if not view.serving:
        checkpoints = fold.number_input(
            "Checkpoints kept",
            min_value=0,
            max_value=1000,
            step=1,
            key=KEY["checkpoints_kept"],
            help="Checkpoints on storage at once, each 14 bytes per trainable parameter "
            "(16-bit and fp32 weights and Adam's two moments).",
        )
    egress_tb = fold.number_input(
        "Downloaded (TB)",
        min_value=0.0,
        value=None,
        step=1.0,
        key=KEY["egress_tb"],
        help="What you download from the provider (egress). Not given: the trained weights, "
        "2 bytes per parameter.",
    )
    storage_price = fold.number_input(
        "Storage price (USD per TB-month)",
        min_value=0.0,
        value=None,
        step=5.0,
        key=KEY["storage_usd_per_tb_month"],
        help="Your price, used for every provider. Not given: each provider's stated price; "
        "where none is stated, storage is named as not priced ('+ ?').",
    )
    egress_price = fold.number_input(
        "Egress price (USD per GB)",
        min_value=0.0,
        value=None,
        step=0.01,
        format="%.3f",  # egress is priced in tenths of a cent per GB (0.087)
        key=KEY["egress_usd_per_gb"],
        help="Your price, used for every provider. Not given: each provider's stated price; "
        "where none is stated, egress is named as not priced ('+ ?').",
    )
    support_pct = fold.number_input(
        "Support plan (% of the GPU bill)",
        min_value=0.0,
        max_value=100.0,
        value=None,
        step=1.0,
        key=KEY["support_pct"],
        help="A support plan you buy, priced as a share of the GPU bill, for every provider. "
        "Not given: no support, unless the box below adds the providers' own plans.",
    )
    stated_support = fold.checkbox(
        "Add each provider's stated support plan",
        key=KEY["include_stated_support"],
        help="Its first tier, where the provider states one; where none is stated, support "
        "is named as not priced. A plan priced above takes its place.",
    )
    return {
        # no data is the same job as data not given, and keeps the request the default one
        "dataset_tb": dataset_tb or None,
        "checkpoints_kept": int(checkpoints),
        "egress_tb": egress_tb,
        "storage_usd_per_tb_month": storage_price,
        "egress_usd_per_gb": egress_price,
        "support_pct": support_pct,
        "include_stated_support": bool(stated_support),
    }


def what_if_choice() -> str | None:
    choice = st.selectbox(
        "Estimate every multi-node offer as if its fabric were",
        [NO_WHAT_IF, *FABRIC_CLASSES],
        key=KEY["what_if"],
    )
    return None if choice == NO_WHAT_IF else choice


def star_grid(
    table: pd.DataFrame, view: RankView, column_config: dict[str, Any], reseed: bool
) -> RankView:
    """The ranked offers as a grid whose row boxes are the stars; returns the view with the
    stars its ticks describe (``view_state.starred_after``: stars of offers not in this
    ranking stay, at most ``MAX_STARS``).

    The grid's key names the ranking it shows (its offers in order), so a tick never lands on
    another ranking's row. Its ticks are set from the view when the grid is new, when the
    page is entered (``reseed``: the Shortlist may have removed stars) and after the cap
    left ticks out."""
    shown = [str(key) for key in table["offer_key"]]
    key = STAR_GRID + hashlib.sha1("\n".join(shown).encode()).hexdigest()[:12]
    capped = st.session_state.pop(CAPPED, 0)
    if reseed or capped or key not in st.session_state:
        rows = {offer: i for i, offer in enumerate(shown)}
        ticked = [rows[offer] for offer in view.starred if offer in rows]
        st.session_state[key] = {"selection": {"rows": ticked}}
    if capped:
        st.warning(
            f"A shortlist holds at most {MAX_STARS} offers: {capped:,} more ticked were not "
            "starred."
        )
    event = st.dataframe(
        table,
        key=key,
        on_select="rerun",
        selection_mode="multi-row",
        hide_index=True,
        width="stretch",
        column_config=column_config,
    )
    stars, left_out = starred_after(view.starred, shown, [shown[i] for i in event.selection.rows])
    starred = replace(view, starred=stars)
    if left_out:
        # the grid shows more ticks than stars: tick it again from the stars, and say why
        st.session_state[CAPPED] = left_out
        remember(starred)
        st.rerun()
    return starred
