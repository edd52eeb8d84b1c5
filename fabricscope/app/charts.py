"""Altair charts for the Rank page (altair ships with Streamlit)."""

from __future__ import annotations

import colorsys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import altair as alt
import pandas as pd

from fabricscope.app.rank_data import STEP_PARTS, cost_text, offer_label, time_text, tpot_text

# a browser draws a few thousand marks comfortably; the table holds the rest
MAX_POINTS = 2000

# 40 colours told apart on a chart: Vega's tableau20 (its ten dark hues, then their light
# pairs) and category20b; a provider past the 40th gets a hue of its own (golden angle)
PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#b79a20", "#439894",
    "#e45756", "#79706e", "#d67195", "#b279a2", "#9e765f",
    "#9ecae9", "#ffbf79", "#88d27a", "#f2cf5b", "#83bcb6",
    "#ff9d98", "#bab0ac", "#fcbfd2", "#d6a5c9", "#d8b5a5",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    "#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194",
    "#6b6ecf", "#b5cf6b", "#e7ba52", "#d6616b", "#ce6dbd",
    "#9c9ede", "#cedb9c", "#e7cb94", "#e7969c", "#de9ed6",
)  # fmt: skip


def provider_colours(providers: Iterable[str]) -> dict[str, str]:
    """One colour per provider, none repeated: the providers sorted, the palette in order.
    Given every provider of the snapshot, a provider keeps its colour in every chart and
    every view, whichever providers a ranking shows."""
    names = sorted(set(providers))
    more = [_hue(i) for i in range(len(names) - len(PALETTE))]
    return dict(zip(names, [*PALETTE, *more], strict=False))


def _hue(index: int) -> str:
    """The ``index``-th colour past the palette: hues a golden angle apart."""
    red, green, blue = colorsys.hls_to_rgb((index * 0.618034) % 1.0, 0.45, 0.6)
    return f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"


def provider_colour(providers: Iterable[str], shown: Iterable[str]) -> alt.Color:
    """Colour by provider on the fixed scale of ``providers``; the legend lists ``shown``."""
    colours = provider_colours(providers)
    present = sorted(set(shown))
    return alt.Color(
        "provider:N",
        title="Provider",
        scale=alt.Scale(domain=list(colours), range=list(colours.values())),
        legend=alt.Legend(values=present),
    )


@dataclass(frozen=True)
class TimeAxis:
    """What a ranking's time is (its estimator's ``time`` and ``time_low``), on the x axis."""

    field: str
    high: str
    low: str
    per_unit: float  # the columns' unit per the axis's unit
    title: str
    text: Callable[[Mapping[str, Any]], str]


TIME_TO_TRAIN = TimeAxis(
    "days", "time_to_train_h", "time_to_train_h_low", 24.0, "Time to train (days, log)", time_text
)
TIME_PER_OUTPUT_TOKEN = TimeAxis(
    "tpot_ms", "tpot_ms", "tpot_ms_low", 1.0, "Time per output token (ms, log)", tpot_text
)


def time_cost_scatter(
    offers: pd.DataFrame, providers: Iterable[str], axis: TimeAxis = TIME_TO_TRAIN
) -> alt.LayerChart:
    """Time (to train, or per output token when serving: ``axis``) against whole cost, one
    point per offer at its pessimistic end, a segment to its optimistic end where the fabric
    is a range, and the Pareto frontier as a line. ``providers``: every provider of the
    snapshot, which fixes each one's colour."""
    data = offers.head(MAX_POINTS)
    rows = data.to_dict("records")
    low = f"{axis.field}_low"
    frame = pd.DataFrame(
        {
            "offer": [offer_label(r) for r in rows],
            "provider": data["provider"],
            axis.field: data[axis.high] / axis.per_unit,
            low: data[axis.low] / axis.per_unit,
            "cost_usd": data["total_cost_usd"],
            "cost_usd_low": data["total_cost_usd_low"],
            "time": [axis.text(r) for r in rows],
            "cost": [cost_text(r) for r in rows],
            "fabric": data["fabric_estimated_as"],
            "pareto": data["pareto"].map({True: "Pareto frontier", False: "dominated"}),
        }
    )
    x = alt.X(f"{axis.field}:Q", scale=alt.Scale(type="log"), title=axis.title)
    y = alt.Y("cost_usd:Q", scale=alt.Scale(type="log"), title="Whole cost (USD, log)")
    tooltip = ["offer", "time", "cost", "fabric", "pareto"]
    ranges = (
        alt.Chart(frame[frame[low] < frame[axis.field]])
        .mark_rule(opacity=0.5)
        .encode(x=x, y=y, x2=f"{low}:Q", y2="cost_usd_low:Q", tooltip=tooltip)
    )
    points = (
        alt.Chart(frame)
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            y=y,
            color=provider_colour(providers, frame["provider"]),
            shape=alt.Shape("pareto:N", title=None),
            tooltip=tooltip,
        )
    )
    frontier = (
        alt.Chart(frame[frame["pareto"] == "Pareto frontier"].sort_values(axis.field))
        .mark_line(interpolate="step-after", color="black", strokeDash=[4, 3])
        .encode(x=x, y=y, order=f"{axis.field}:Q")
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


def curve_chart(curves: pd.DataFrame, axis: str, measure: str) -> alt.Chart:
    """One line per shortlisted offer (fabricscope/rank/curves.py): days or whole cost
    (``measure``: "days" or "cost") against the GPU count or the Gb/s per GPU (``axis``:
    "gpus" or "gbps_per_gpu"), at the worse end, with the verdict and exposed communication
    in the tooltip. Both axes are logarithmic."""
    data = curves[curves["axis"] == axis]
    frame = pd.DataFrame(
        {
            "offer": [
                f"{p} {t}" for p, t in zip(data["provider"], data["instance_type"], strict=True)
            ],
            "x": data["x"].astype(float),
            "days": data["time_to_train_h"].astype(float) / 24,
            "cost": data["total_cost_usd"].astype(float),
            "verdict": data["verdict"],
            "exposed": data["comm_fraction_exposed"].astype(float),
        }
    )
    x_title = "GPUs (log)" if axis == "gpus" else "Inter-node bandwidth per GPU (Gb/s, log)"
    y_title = "Time to train (days, log)" if measure == "days" else "Whole cost (USD, log)"
    return (
        alt.Chart(frame)
        .mark_line(point=True)
        .encode(
            x=alt.X("x:Q", scale=alt.Scale(type="log"), title=x_title),
            y=alt.Y(f"{measure}:Q", scale=alt.Scale(type="log"), title=y_title),
            color=alt.Color("offer:N", title="offer"),
            tooltip=[
                "offer",
                alt.Tooltip("x:Q", title="GPUs" if axis == "gpus" else "Gb/s per GPU"),
                alt.Tooltip("days:Q", format=",.1f"),
                alt.Tooltip("cost:Q", format="$,.0f", title="whole cost"),
                "verdict",
                alt.Tooltip("exposed:Q", format=".0%", title="exposed communication"),
            ],
        )
    )
