"""Altair charts for the Rank page (altair ships with Streamlit)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from ui.rank_data import STEP_PARTS, cost_text, offer_label, time_text

# a browser draws a few thousand marks comfortably; the table holds the rest
MAX_POINTS = 2000


def time_cost_scatter(offers: pd.DataFrame) -> alt.LayerChart:
    """Time-to-train against cost, one point per offer at its pessimistic end, a segment to
    its optimistic end where the fabric is a range, and the Pareto frontier as a line."""
    data = offers.head(MAX_POINTS)
    rows = data.to_dict("records")
    frame = pd.DataFrame(
        {
            "offer": [offer_label(r) for r in rows],
            "provider": data["provider"],
            "days": data["time_to_train_h"] / 24,
            "days_low": data["time_to_train_h_low"] / 24,
            "cost_usd": data["cost_usd"],
            "cost_usd_low": data["cost_usd_low"],
            "time": [time_text(r) for r in rows],
            "cost": [cost_text(r) for r in rows],
            "fabric": data["fabric_estimated_as"],
            "pareto": data["pareto"].map({True: "Pareto frontier", False: "dominated"}),
        }
    )
    x = alt.X("days:Q", scale=alt.Scale(type="log"), title="Time to train (days, log)")
    y = alt.Y("cost_usd:Q", scale=alt.Scale(type="log"), title="Cost (USD, log)")
    tooltip = ["offer", "time", "cost", "fabric", "pareto"]
    ranges = (
        alt.Chart(frame[frame["days_low"] < frame["days"]])
        .mark_rule(opacity=0.5)
        .encode(x=x, y=y, x2="days_low:Q", y2="cost_usd_low:Q", tooltip=tooltip)
    )
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            y=y,
            color=alt.Color("provider:N", title="Provider"),
            shape=alt.Shape("pareto:N", title=None),
            tooltip=tooltip,
        )
    )
    frontier = (
        alt.Chart(frame[frame["pareto"] == "Pareto frontier"].sort_values("days"))
        .mark_line(interpolate="step-after", color="black", strokeDash=[4, 3])
        .encode(x=x, y=y, order="days:Q")
    )
    return alt.LayerChart(layer=[ranges, frontier, points], height=420)


def step_time_bars(parts: pd.DataFrame) -> alt.Chart:
    """One horizontal bar per offer: its step time split into compute, communication..."""
    return (
        alt.Chart(parts)
        .mark_bar()
        .encode(
            y=alt.Y("offer:N", sort=None, title=None),
            x=alt.X("seconds:Q", stack="zero", title="Seconds per training step"),
            color=alt.Color(
                "part:N",
                scale=alt.Scale(domain=list(STEP_PARTS.values())),
                title="Part of the step",
            ),
            order=alt.Order("order:Q"),
            tooltip=["offer", "part", alt.Tooltip("seconds:Q", format=".4f")],
        )
        .properties(height=max(160, 28 * parts["offer"].nunique()))
    )


def gpu_memory_compute_scatter(gpus: pd.DataFrame) -> alt.Chart:
    """Each GPU model's memory against its dense BF16 peak, coloured by vendor."""
    frame = gpus.dropna(subset=["bf16_dense_tflops", "memory_gb"])[
        ["gpu_model", "vendor", "memory_gb", "bf16_dense_tflops"]
    ]
    return (
        alt.Chart(frame)
        .mark_circle(size=80)
        .encode(
            x=alt.X("memory_gb:Q", title="Memory per GPU (GB)"),
            y=alt.Y("bf16_dense_tflops:Q", title="BF16 dense TFLOP/s"),
            color=alt.Color("vendor:N", title="vendor"),
            tooltip=["gpu_model", "vendor", "memory_gb", "bf16_dense_tflops"],
        )
    )
