"""Rankings for the app: cached per snapshot, and shaped into what the pages show.

The cached functions key on the warehouse path and the snapshot id, so a new snapshot is
read on the next rerun without a restart, and every number on one page comes from the one
snapshot the page started with. The ``*_table`` functions are pure: a ranking in, a frame to
display out (ranges as text, so an unknown fabric never reads as one confident number).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from fabricscope.app.components import as_of, serve_stored, snapshot_or_setup
from fabricscope.app.shortlist_files import Downloads, downloads
from fabricscope.model import error_bands
from fabricscope.model.scaling import FAILURE_PART
from fabricscope.model.scaling import STEP_PARTS as MODEL_STEP_PARTS
from fabricscope.procurement import shortlist as shortlisting
from fabricscope.rank.estimators import spans_nodes
from fabricscope.rank.materialised import materialised_result
from fabricscope.rank.ranking import (
    RankInputs,
    RankRequest,
    RankResult,
    rank,
    read_inputs,
    what_if_changes,
    what_if_rule,
    what_if_summary,
)

T = TypeVar("T")
# the parts of one training step, in seconds per step, as the model declares them, and failures
STEP_PARTS: dict[str, str] = {part.field: part.label for part in (*MODEL_STEP_PARTS, FAILURE_PART)}


class SnapshotMoved(RuntimeError):
    """A new snapshot was published between finding the id and reading it."""


@st.cache_resource(show_spinner=False, max_entries=4)
def _inputs(path: str, snapshot_id: int) -> RankInputs:
    inputs = read_inputs(Path(path))
    if inputs.snapshot.snapshot_id != snapshot_id:
        raise SnapshotMoved(f"asked for snapshot {snapshot_id}, read {inputs.snapshot.snapshot_id}")
    return inputs


# a ranking of a large catalog holds its excluded rows too: keep a handful per process
# ``as_of``: the ``as_of`` setting (prices aged at that time), or None for the clock at the time
# the ranking is computed; part of every key, so a pinned time is never served a clock's ranking
# ``stored``: serve the ranking the refresh stored for this very request when it is the same
# answer (fabricscope/rank/materialised.py), else rank it live
@st.cache_resource(show_spinner=False, max_entries=16)
def _ranked(
    path: str, snapshot_id: int, request_json: str, as_of: datetime | None, stored: bool = True
) -> RankResult:
    request = RankRequest.model_validate_json(request_json)
    inputs = _inputs(path, snapshot_id)
    if stored:
        served = materialised_result(Path(path), inputs, request, as_of)
        if served is not None:
            return served
    return rank(inputs, request, as_of)


@st.cache_resource(show_spinner=False, max_entries=16)
def _what_if(
    path: str, snapshot_id: int, request_json: str, as_of: datetime | None, fabric_class: str
) -> RankResult:
    return _ranked(path, snapshot_id, request_json, as_of, serve_stored()).what_if(fabric_class)


@st.cache_resource(show_spinner=False, max_entries=16)
def _shortlist(
    path: str,
    snapshot_id: int,
    request_json: str,
    as_of: datetime | None,
    offer_keys: tuple[str, ...],
) -> shortlisting.Shortlist:
    result = _ranked(path, snapshot_id, request_json, as_of, serve_stored())
    return shortlisting.from_result(result, offer_keys=list(offer_keys))


@st.cache_data(show_spinner=False, max_entries=16)
def _downloads(
    path: str,
    snapshot_id: int,
    request_json: str,
    as_of: datetime | None,
    offer_keys: tuple[str, ...],
    notes: tuple[tuple[str, str], ...],
) -> Downloads:
    chosen = _shortlist(path, snapshot_id, request_json, as_of, offer_keys)
    return downloads(chosen, dict(notes))


def _same_snapshot(read: Callable[[], T]) -> T:
    """``read()``; if a snapshot was published mid-read (or its inputs were evicted
    meanwhile), start the page again on the current one."""
    try:
        return read()
    except SnapshotMoved:
        st.rerun()


def rank_inputs(path: Path) -> RankInputs:
    """What rankings read, from the current snapshot (cached per snapshot id)."""
    snapshot_id = snapshot_or_setup(path).snapshot_id
    return _same_snapshot(lambda: _inputs(str(path), snapshot_id))


def ranked(inputs: RankInputs, path: Path, request: RankRequest) -> RankResult:
    snapshot_id, request_json, now = inputs.snapshot.snapshot_id, request.model_dump_json(), as_of()
    stored = serve_stored()
    return _same_snapshot(lambda: _ranked(str(path), snapshot_id, request_json, now, stored))


def what_if(inputs: RankInputs, path: Path, request: RankRequest, fabric_class: str) -> RankResult:
    snapshot_id, request_json, now = inputs.snapshot.snapshot_id, request.model_dump_json(), as_of()
    return _same_snapshot(lambda: _what_if(str(path), snapshot_id, request_json, now, fabric_class))


def shortlist(
    inputs: RankInputs, path: Path, request: RankRequest, offer_keys: Sequence[str]
) -> shortlisting.Shortlist:
    """The starred offers as a Shortlist (ShortlistError if one is not ranked)."""
    snapshot_id, request_json, now = inputs.snapshot.snapshot_id, request.model_dump_json(), as_of()
    keys = tuple(offer_keys)
    return _same_snapshot(lambda: _shortlist(str(path), snapshot_id, request_json, now, keys))


def shortlist_downloads(
    inputs: RankInputs,
    path: Path,
    request: RankRequest,
    offer_keys: Sequence[str],
    notes: Mapping[str, str],
) -> Downloads:
    """CSV, XLSX and memo of the starred offers (cached: the workbook takes a moment)."""
    snapshot_id, request_json, now = inputs.snapshot.snapshot_id, request.model_dump_json(), as_of()
    keys, written = tuple(offer_keys), tuple(sorted(notes.items()))
    return _same_snapshot(
        lambda: _downloads(str(path), snapshot_id, request_json, now, keys, written)
    )


# ---- text for ranges


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def duration(hours: float, low: float | None = None) -> str:
    """'42 min', '31.2 h' or '132 d'; with ``low``, a range in the unit of the larger end."""
    if _missing(hours):
        return "unknown"
    if hours < 1:
        scale, unit, digits = 60.0, "min", 0
    elif hours < 72:
        scale, unit, digits = 1.0, "h", 1
    else:
        scale, unit, digits = 1 / 24, "d", 0
    high_text = f"{hours * scale:,.{digits}f}"
    if low is None or _missing(low):
        return f"{high_text} {unit}"
    low_text = f"{low * scale:,.{digits}f}"
    if low_text == high_text:
        return f"{high_text} {unit}"
    return f"{low_text}–{high_text} {unit}"


def usd(amount: float, low: float | None = None) -> str:
    """'$268', '$5.99M'; with ``low``, a range."""

    def one(value: float) -> str:
        if value >= 1e6:
            return f"${value / 1e6:,.2f}M"
        if value >= 100:
            return f"${value:,.0f}"
        return f"${value:,.2f}"

    return _span(one, amount, low)


def ms(value: float, low: float | None = None) -> str:
    """Milliseconds as `rank --serve` prints them: whole from 10 ms up, one decimal below;
    with ``low``, a range."""
    return _span(lambda number: f"{number:,.{1 if abs(number) < 10 else 0}f}", value, low)


def _span(one: Callable[[float], str], value: float, low: float | None) -> str:
    """``value`` as ``one`` writes it; a range from ``low`` where the two ends read apart."""
    if _missing(value):
        return "unknown"
    if low is None or _missing(low) or one(low) == one(value):
        return one(value)
    return f"{one(low)}–{one(value)}"


def _same_on_any_fabric(text: str, row: Mapping[str, Any]) -> str:
    """An unknown fabric shown as one number says that it moves nothing."""
    if bool(row["fabric_range"]) and "–" not in text:
        return f"{text} (same on any fabric)"
    return text


def tpot_text(row: Mapping[str, Any]) -> str:
    """The time per output token reached, a range where the fabric is unknown and matters."""
    return _same_on_any_fabric(ms(row["tpot_ms"], row["tpot_ms_low"]), row)


def counts_tried(counts: Sequence[int]) -> str:
    """A serving ranking's GPU counts: each offer is ranked at the fewest that carry the load."""
    if len(counts) == 1:
        return f"{counts[0]:,} GPUs"
    return f"{counts[0]:,} to {counts[-1]:,} GPUs ({len(counts)} counts tried)"


def time_text(row: Mapping[str, Any]) -> str:
    return _same_on_any_fabric(duration(row["time_to_train_h"], row["time_to_train_h_low"]), row)


def error_band_text(row: Mapping[str, Any]) -> str:
    """The model's held-out error for the row's GPU and job, and the cell it comes from:
    '±16% (Hopper BF16 dense on Megatron, 11 runs held out)'."""
    return error_bands.band_text(
        row.get("error_band_pct"), row.get("error_band_cell"), row.get("error_band_runs")
    )


def time_band_text(row: Mapping[str, Any]) -> str:
    """The time to train at the error band's ends (from the better fabric end less the band
    to the worse end plus it); 'up to' where the band has no lower end."""
    high, low = row.get("time_to_train_h_band_high"), row.get("time_to_train_h_band_low")
    if high is None or _missing(high):
        return "unknown"
    if low is None or _missing(low):
        return f"up to {duration(high)}"
    return duration(high, low)


def error_band_notes(offers: pd.DataFrame, serving: bool = False) -> list[str]:
    """What each error band among ``offers`` means, once per band (``serving``: a served
    model's, of its output tokens/s per GPU at the latency target)."""
    scheme = error_bands.SERVING if serving else error_bands.TRAINING
    return error_bands.notes(offers.to_dict("records"), scheme)


def serving_band_caveat(offers: pd.DataFrame) -> str | None:
    """Where a ranked replica spans nodes: that no held-out serving run crossed a fabric."""
    if any(spans_nodes(verdict) for verdict in offers["verdict"]):
        return error_bands.SERVING_FABRIC_CAVEAT
    return None


def tokens_band_text(row: Mapping[str, Any]) -> str:
    """Output tokens/s per GPU at the error band's ends (from the worse fabric end less the
    band to the better end plus it); 'at least' where the band is 100% or more."""
    low, high = row.get("tokens_per_s_per_gpu_band_low"), row.get("tokens_per_s_per_gpu_band_high")
    if low is None or _missing(low):
        return "unknown"
    if high is None or _missing(high):
        return f"at least {low:,.0f}"
    return _span(lambda number: f"{number:,.0f}", high, low)


def usd_band_text(row: Mapping[str, Any]) -> str:
    """USD per million output tokens at the error band's ends; 'up to' where the band is 100%
    or more."""
    low = row.get("usd_per_million_output_tokens_band_low")
    high = row.get("usd_per_million_output_tokens_band_high")
    if high is None or _missing(high):
        return "unknown"
    if low is None or _missing(low):
        return f"up to {per_million(high)}"
    return _span(per_million, high, low)


def per_million(value: float) -> str:
    """USD per million tokens: cents from $1 up, tenths of a cent below."""
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.3f}"


def cost_text(row: Mapping[str, Any]) -> str:
    """The whole cost (fabricscope/rank/costs.py) as a range; "+ ?" when a part is unpriced."""
    text = usd(row["total_cost_usd"], row["total_cost_usd_low"])
    return f"{text} + ?" if not _missing(row.get("costs_unknown")) else text


def cost_parts_text(row: Mapping[str, Any]) -> str:
    """Where the whole cost goes, at the worse end: the GPUs billed, the commitment beyond
    the run, storage, egress and support; a part nobody prices says so."""
    parts = [f"GPUs {usd(row['gpu_cost_usd'])}"]
    if not _missing(row.get("commitment_usd")) and row["commitment_usd"] > 0:
        parts.append(f"of which the commitment beyond the run {usd(row['commitment_usd'])}")
    for name, label in (
        ("storage_usd", "storage"),
        ("egress_usd", "egress"),
        ("support_usd", "support"),
    ):
        value = row.get(name)
        if not _missing(value):
            parts.append(f"{label} {usd(value)}")
    unknown = row.get("costs_unknown")
    if not _missing(unknown):
        parts.append(f"not priced: {unknown}")
    return "; ".join(parts)


def offer_label(row: Mapping[str, Any]) -> str:
    """One line naming a ranked offer: '#1 nebius, sold by prime_intellect · 8x H100 SXM
    80GB, InfiniBand, bandwidth not stated · US · on_demand' (its id where it has no label)."""
    region, seller = row.get("region"), row.get("sold_by")
    where = "" if _missing(region) else f" · {region}"
    who = row["provider"]
    if not _missing(seller) and seller != who:
        who = f"{who}, sold by {seller}"
    what = row.get("offer_label")
    what = row["instance_type"] if _missing(what) else what
    return f"#{row['rank']} {who} · {what}{where} · {row['pricing_tier']}"


# ---- tables


def price_from(row: Mapping[str, Any]) -> str:
    """Whether the price is a list price or one of the buyer's quotes (with its validity)."""
    if row.get("price_obtained_by") != "quote":
        return "list price"
    until = row.get("quote_valid_until")
    valid = "no end date" if _missing(until) else f"valid until {pd.Timestamp(until):%Y-%m-%d}"
    return f"your quote {row.get('quote_id')}, {valid}"


def offers_table(offers: pd.DataFrame, starred: Iterable[str] = ()) -> pd.DataFrame:
    """The ranked offers as shown: ranges as text, sources and dates beside the numbers."""
    chosen = set(starred)
    rows = offers.to_dict("records")
    table = pd.DataFrame(
        {
            "starred": offers["offer_key"].isin(chosen),
            "rank": offers["rank"],
            "provider": offers["provider"],
            "offer_label": offers["offer_label"],
            "gpu_model": offers["gpu_model"],
            "gpus_per_node": offers["gpus_per_node"],
            "gpus": offers["gpus"],
            "sold_and_run_by": offers["sold_and_run_by"],
            "price_from": [price_from(r) for r in rows],
            "time_to_train": [time_text(r) for r in rows],
            "cost": [cost_text(r) for r in rows],
            "error_band": [error_band_text(r) for r in rows],
            "time_band": [time_band_text(r) for r in rows],
            "cost_parts": [cost_parts_text(r) for r in rows],
            "cost_basis": offers["cost_basis"],
            "verdict": offers["verdict"],
            "fabric_estimated_as": offers["fabric_estimated_as"],
            "price_age_days": offers["data_age_days"],
            "multi_node": offers["multi_node"].map(_yes_no_unknown),
            "regions": offers["regions"],
            "pricing_tier": offers["pricing_tier"],
            "nodes": offers["nodes"],
            "usd_per_million_tokens": offers["usd_per_million_tokens"],
            "mfu": offers["mfu"],
            "transparency_score": offers["transparency_score"],
            "price_usd_per_gpu_hour": offers["price_usd_per_gpu_hour"],
            **_sources(offers),
            "pareto": offers["pareto"],
            "notes": offers["notes"],
            "instance_type": offers["instance_type"],
            "offer_key": offers["offer_key"],
        }
    )
    return table.reset_index(drop=True)


def _sources(offers: pd.DataFrame) -> dict[str, pd.Series]:
    """Where a ranked offer's price and fabric come from, and when they were seen."""
    return {
        "price_source_url": offers["price_source_url"],
        "price_published_by": offers["price_published_by"],
        "price_observed_at": _dates(offers["price_observed_at"]),
        "fabric_source_url": offers["fabric_source_url"],
        "fabric_source_grade": offers["fabric_source_grade"],
        # the date the fabric's source states or was read; not when our run replayed it
        "fabric_source_date": _dates(offers["fabric_source_date"]),
    }


def serve_offers_table(offers: pd.DataFrame) -> pd.DataFrame:
    """A serving ranking's offers as shown (the columns of `rank --serve`): USD per million
    output and input tokens, TPOT (a range where the fabric is unknown), TTFT, the requests/s
    carried, output tokens/s per GPU, the error band (held out) and the tokens/s and USD per
    million output tokens at its ends, the layout, the whole cost for the service's hours,
    the price, the verdict and the fabric as estimated; then the detail and the sources."""
    rows = offers.to_dict("records")
    table = pd.DataFrame(
        {
            "rank": offers["rank"],
            "provider": offers["provider"],
            "offer_label": offers["offer_label"],
            "gpu_model": offers["gpu_model"],
            "gpus": offers["gpus"],
            "usd_per_million_output_tokens": offers["usd_per_million_output_tokens"],
            "usd_per_million_input_tokens": offers["usd_per_million_input_tokens"],
            "tpot": [tpot_text(r) for r in rows],
            "ttft": [ms(r["ttft_ms"]) for r in rows],
            "requests_per_s": offers["capacity_requests_per_s"],
            "tokens_per_s_per_gpu": offers["tokens_per_s_per_gpu"],
            "error_band": [error_band_text(r) for r in rows],
            "tokens_band": [tokens_band_text(r) for r in rows],
            "usd_band": [usd_band_text(r) for r in rows],
            "layout": offers["layout"],
            "cost": [cost_text(r) for r in rows],
            "price_usd_per_gpu_hour": offers["price_usd_per_gpu_hour"],
            "price_from": [price_from(r) for r in rows],
            "verdict": offers["verdict"],
            "fabric_estimated_as": offers["fabric_estimated_as"],
            "replicas": offers["replicas"],
            "memory_gb_per_gpu": offers["memory_gb_per_gpu"],
            "cost_parts": [cost_parts_text(r) for r in rows],
            "cost_basis": offers["cost_basis"],
            "sold_and_run_by": offers["sold_and_run_by"],
            "gpus_per_node": offers["gpus_per_node"],
            "nodes": offers["nodes"],
            "pricing_tier": offers["pricing_tier"],
            "regions": offers["regions"],
            "price_age_days": offers["data_age_days"],
            "multi_node": offers["multi_node"].map(_yes_no_unknown),
            "transparency_score": offers["transparency_score"],
            **_sources(offers),
            "pareto": offers["pareto"],
            "notes": offers["notes"],
            "instance_type": offers["instance_type"],
            "offer_key": offers["offer_key"],
        }
    )
    return table.reset_index(drop=True)


def providers_table(providers: pd.DataFrame, serving: bool = False) -> pd.DataFrame:
    """Each provider's best offer; its time to train, or (``serving``) its TPOT."""
    rows = providers.to_dict("records")
    time = (
        {"tpot": [tpot_text(r) for r in rows], "error_band": [error_band_text(r) for r in rows]}
        if serving
        else {
            "time_to_train": [time_text(r) for r in rows],
            "error_band": [error_band_text(r) for r in rows],
        }
    )
    return pd.DataFrame(
        {
            "provider": providers["provider"],
            "best_rank": providers["rank"],
            "gpu_model": providers["gpu_model"],
            "gpus_per_node": providers["gpus_per_node"],
            "best_offer": providers["offer_label"],
            "sold_and_run_by": providers["sold_and_run_by"],
            "offers": providers["offers"],
            "gpus": providers["gpus"],
            **time,
            "cost": [cost_text(r) for r in rows],
            "verdict": providers["verdict"],
            "fabric_estimated_as": providers["fabric_estimated_as"],
            "transparency_score": providers["transparency_score"],
            "best_offer_id": providers["instance_type"],
        }
    )


def step_parts(offers: pd.DataFrame, top: int) -> pd.DataFrame:
    """Seconds per step by part for the ``top`` ranked offers (long form, for a stacked bar)."""
    head = offers.head(top)
    labels = [offer_label(r) for r in head.to_dict("records")]
    frame = head[list(STEP_PARTS)].copy()
    frame.insert(0, "offer", labels)
    long = frame.melt(id_vars="offer", var_name="part", value_name="seconds")
    long["part"] = long["part"].map(STEP_PARTS)
    long["order"] = long["part"].map({name: i for i, name in enumerate(STEP_PARTS.values())})
    return long


def what_if_shown(base: RankResult, other: RankResult) -> tuple[pd.DataFrame, str]:
    """The what-if as the Rank page shows it: the table of the ranking's kind (a training
    job's or a served model's) and its caption (how many offers change, and the rule)."""
    kind = base.estimator.kind
    fabric = other.request.fabric_override or ""
    changes = what_if_changes(base, other)
    table = serve_what_if_table(changes) if kind == "serving" else what_if_table(changes)
    return table, f"{what_if_summary(changes, fabric, kind)} {what_if_rule(fabric, kind=kind)}"


def what_if_table(changes: pd.DataFrame) -> pd.DataFrame:
    """Each ranked offer, its time and cost now and with the other fabric, the fabric each is
    costed at, the change and the exposed communication (``ranking.what_if_changes`` of a
    training ranking)."""
    rows = []
    for row in changes.to_dict("records"):
        ranked = not _missing(row["time_to_train_h_what_if"])
        rows.append(
            {
                "rank": row["rank"],
                "provider": row["provider"],
                "offer_label": row["offer_label"],
                "gpu_model": row["gpu_model"],
                "gpus_now": row["gpus"],
                "fabric_now": row["fabric_now"],
                "fabric_what_if": row["fabric_what_if"],
                "time_now": duration(row["time_to_train_h"], row["time_to_train_h_low"]),
                "time_what_if": duration(
                    row["time_to_train_h_what_if"], row["time_to_train_h_low_what_if"]
                )
                if ranked
                else None,
                "time_change": row["time_change"],
                "cost_now": usd(row["cost_usd"], row["cost_usd_low"]),
                "cost_what_if": usd(row["cost_usd_what_if"], row["cost_usd_low_what_if"])
                if ranked
                else None,
                "cost_change_usd": row["cost_change_usd"],
                "error_band": error_band_text(row),
                "comm_now": row["comm_fraction_exposed"],
                "comm_what_if": row["comm_fraction_exposed_what_if"],
                "verdict_what_if": row["verdict_what_if"],
                "what_if_note": row["what_if_note"],
                "instance_type": row["instance_type"],
                "offer_key": row["offer_key"],
            }
        )
    return pd.DataFrame(rows)


def tokens_text(value: float, other_end: float | None = None) -> str:
    """Output tokens per second per GPU, whole; a range, the worse end (fewer) first, where
    the fabric is unknown."""
    ends = [v for v in (value, other_end) if v is not None and not _missing(v)]
    if not ends:
        return "unknown"
    return _span(lambda number: f"{number:,.0f}", max(ends), min(ends))


def serve_what_if_table(changes: pd.DataFrame) -> pd.DataFrame:
    """A served model's ranked offers now and with the other fabric: the fabric each is
    costed at, output tokens/s per GPU and USD per million output tokens at both and the
    change, the GPUs rented, the TPOT, the fabric's share, the layout and the verdict with the
    other fabric, and why an offer is not ranked with it (``ranking.what_if_changes`` of a
    serving ranking)."""
    rows = changes.to_dict("records")
    ranked = changes["what_if_note"].isna()
    return pd.DataFrame(
        {
            "rank": changes["rank"],
            "provider": changes["provider"],
            "offer_label": changes["offer_label"],
            "gpu_model": changes["gpu_model"],
            "gpus_now": changes["gpus"],
            "gpus_what_if": changes["gpus_what_if"],
            "fabric_now": changes["fabric_now"],
            "fabric_what_if": changes["fabric_what_if"],
            "tokens_now": [
                tokens_text(r["tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu_low"]) for r in rows
            ],
            "tokens_what_if": [
                tokens_text(
                    r["tokens_per_s_per_gpu_what_if"], r["tokens_per_s_per_gpu_low_what_if"]
                )
                if ok
                else None
                for r, ok in zip(rows, ranked, strict=True)
            ],
            "tokens_change": changes["tokens_change"],
            "usd_per_million_now": changes["usd_per_million_output_tokens"],
            "usd_per_million_what_if": changes["usd_per_million_output_tokens_what_if"],
            "usd_per_million_change": changes["usd_per_million_change"],
            "error_band": [error_band_text(r) for r in rows],
            "tpot_what_if": [
                ms(r["tpot_ms_what_if"], r["tpot_ms_low_what_if"]) if ok else None
                for r, ok in zip(rows, ranked, strict=True)
            ],
            "fabric_share_what_if": changes["fabric_share_what_if"],
            "layout_what_if": changes["layout_what_if"],
            "verdict_what_if": changes["verdict_what_if"],
            "what_if_note": changes["what_if_note"],
            "instance_type": changes["instance_type"],
            "offer_key": changes["offer_key"],
        }
    )


def _yes_no_unknown(value: object) -> str:
    return "unknown" if _missing(value) else ("yes" if value else "no")


def _dates(column: pd.Series) -> pd.Series:
    stamps = pd.to_datetime(column, utc=True, errors="coerce")
    return stamps.dt.strftime("%Y-%m-%d")
