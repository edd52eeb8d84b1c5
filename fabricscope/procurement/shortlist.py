"""The procurement shortlist: chosen offers, their numbers and sources, and what to ask.

``build`` ranks the workload (fabricscope/rank/ranking.py) and keeps the offers the user picked (by
key) or the top K; ``write`` turns that into three files a buyer can hand on:

- ``PREFIX.csv``: the shortlisted ranking rows, every column, exactly as ``fabricscope rank``
  computes them, plus each provider's transparency score.
- ``PREFIX.xlsx``: sheets ``shortlist`` (the same rows, the columns a buyer decides on:
  SHORTLIST_COLUMNS), ``details`` (every other column of those rows), ``assumptions`` (the
  workload, the request, the model's constants and the ranking's priors, the snapshot),
  ``transparency`` (every answer for the shortlisted providers with its evidence), ``fabric
  sensitivity`` and one ``RFI <provider>`` sheet per provider with its open questions. Every
  sheet has human headers (COLUMNS), a bold frozen header row and widths fitted to its
  content; numbers keep their full precision and are formatted for reading (USD, days, %).
- ``PREFIX.md``: a memo: the workload, the ranking, the verdict, what the fabric is worth for
  this job (the same offers estimated on InfiniBand and on plain Ethernet), and per provider
  the request-for-information questions still unanswered, ready to send.

Every number comes from one ranking of one snapshot, whose id every file names.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from fabricscope.evidence import transparency
from fabricscope.model import error_bands
from fabricscope.model.scaling import FAILURE_PART, ModelConstants
from fabricscope.model.scaling import STEP_PARTS as MODEL_STEP_PARTS
from fabricscope.model.serving import ServingConstants
from fabricscope.procurement import acceptance, rfi
from fabricscope.rank import curves as curving
from fabricscope.rank import ranking
from fabricscope.rank.estimators import spans_nodes

SENSITIVITY_CLASSES = ("infiniband", "ethernet")
# what the fabric sensitivity holds on each fabric besides the ranking's time and GPU cost:
# for a served model, what its what-if compares (ranking.WHAT_IF_VIEWS): output tokens/s per
# GPU and USD per million output tokens
SENSITIVITY_EXTRAS: dict[str, tuple[str, ...]] = {
    "training": (),
    "serving": ("tokens_per_s_per_gpu", "usd_per_million_output_tokens"),
}


# the memo flags a price its source observed longer ago than this
STALE_PRICE_DAYS = 30


class ShortlistError(ValueError):
    """A shortlist that cannot be built; the message says what to change."""


@dataclass(frozen=True)
class Shortlist:
    result: ranking.RankResult
    rows: pd.DataFrame  # the shortlisted ranking rows, in rank order
    answers: tuple[transparency.Answer, ...]  # of the shortlisted providers
    scores: dict[str, transparency.ProviderScore]
    open_questions: dict[str, list[transparency.Question]]
    sensitivity: pd.DataFrame  # per row: time and cost on each SENSITIVITY_CLASSES fabric
    # time and whole cost against GPU count and bandwidth per GPU (fabricscope/rank/curves.py)
    curves: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def snapshot_id(self) -> int | None:
        return self.result.snapshot.snapshot_id if self.result.snapshot else None


def build(
    warehouse: Path,
    request: ranking.RankRequest,
    top: int | None = None,
    offer_keys: Sequence[str] | None = None,
    now: datetime | None = None,
) -> Shortlist:
    """Rank (prices aged at ``now``, default the clock), then keep ``offer_keys`` (in rank
    order) or the ``top`` rows."""
    if (top is None) == (not offer_keys):
        raise ShortlistError("pick the offers: give either top K or offer keys")
    if top is not None and top < 1:
        raise ShortlistError(f"top must be at least 1 (got {top})")
    result = ranking.rank(warehouse, request, now)
    return from_result(result, top, offer_keys)


def from_result(
    result: ranking.RankResult, top: int | None = None, offer_keys: Sequence[str] | None = None
) -> Shortlist:
    offers = result.offers
    if offer_keys:
        unknown = [key for key in offer_keys if key not in set(offers["offer_key"])]
        if unknown:
            excluded = dict(
                zip(result.excluded["offer_key"], result.excluded["reason"], strict=False)
            )
            why = [f"{key} ({excluded.get(key, 'not a current offer')})" for key in unknown]
            raise ShortlistError(f"not in the ranking: {'; '.join(why)}")
        rows = offers[offers["offer_key"].isin(offer_keys)]
    else:
        rows = offers.head(top)
    if rows.empty:
        raise ShortlistError("no offer qualifies for this workload and these constraints")
    rows = rows.reset_index(drop=True)
    providers = list(dict.fromkeys(rows["provider"]))
    answers = tuple(a for a in result.answers if a.provider in providers)
    scores = transparency.scores(answers) if answers else {}
    questions = {
        p: transparency.open_questions(answers, p) if p in scores else [] for p in providers
    }
    return Shortlist(
        result,
        rows,
        answers,
        scores,
        questions,
        _sensitivity(result, rows),
        # time and cost against GPU count and bandwidth: a training job's (a served model is
        # ranked at the fewest GPUs that carry its load)
        curving.curves(result, list(rows["offer_key"])) if not _serving(result) else pd.DataFrame(),
    )


def _serving(result: ranking.RankResult) -> bool:
    return result.estimator.kind == "serving"


def _moe(job: Any) -> bool:
    """Whether the model is a mixture of experts (a served model's is its architecture's)."""
    return getattr(getattr(job, "architecture", job), "moe", None) is not None


def _sensitivity(result: ranking.RankResult, rows: pd.DataFrame) -> pd.DataFrame:
    """The shortlisted offers estimated as if on each of SENSITIVITY_CLASSES."""
    frame = rows[["offer_key", "provider", "offer_label", "instance_type", "gpus", "nodes"]].copy()
    if result.catalog.empty:
        return frame
    # hours to train, or a served model's ms per output token; the GPUs' cost; the extras
    measures = (result.estimator.time, "cost_usd", *SENSITIVITY_EXTRAS[result.estimator.kind])
    for fabric in SENSITIVITY_CLASSES:
        other = result.what_if(fabric).offers.set_index("offer_key")
        for name in measures:
            frame[f"{name}_{fabric}"] = [other[name].get(key) for key in frame["offer_key"]]
    return frame


# ---- files


# the suffix of the answers template written beside the memo
ANSWERS_SUFFIX = "-rfi-answers.csv"


def write(shortlist: Shortlist, prefix: Path) -> list[Path]:
    """Write PREFIX.csv, PREFIX.xlsx, PREFIX.md and the answers template for the memo's open
    questions, PREFIX-rfi-answers.csv (each whole or not at all)."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    suffixes = (".csv", ".xlsx", ".md", ANSWERS_SUFFIX)
    paths = [prefix.with_name(prefix.name + suffix) for suffix in suffixes]
    _atomic(paths[0], lambda path: csv_frame(shortlist).to_csv(path, index=False))
    _atomic(paths[1], lambda path: _write_xlsx(shortlist, path))
    _atomic(paths[2], lambda path: path.write_text(memo(shortlist), encoding="utf-8"))
    _atomic(paths[3], lambda path: path.write_text(answers_template(shortlist), encoding="utf-8"))
    return paths


def answers_template(shortlist: Shortlist) -> str:
    """The answers template for the shortlisted providers' open questions (CSV), to send with
    the memo and import back with `fabricscope answers import`."""
    providers = list(shortlist.open_questions)
    return rfi.template_csv(rfi.template_rows(providers, shortlist.answers))


def _atomic(path: Path, write_to: Any) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(handle)
    try:
        write_to(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def csv_frame(shortlist: Shortlist) -> pd.DataFrame:
    return shortlist.rows[shortlist.result.columns]


def assumptions(shortlist: Shortlist) -> pd.DataFrame:
    request = shortlist.result.request
    snapshot = shortlist.result.snapshot
    items: list[tuple[str, str, Any]] = [
        ("snapshot", "snapshot_id", shortlist.snapshot_id),
        ("snapshot", "published_at", snapshot.published_at.isoformat() if snapshot else None),
    ]
    items += [("workload", k, _cell(v)) for k, v in request.workload.model_dump().items()]
    items += [
        ("request", k, _cell(v))
        for k, v in request.model_dump(mode="json", exclude={"workload"}).items()
    ]
    items += [("model constant", k, v) for k, v in asdict(ModelConstants()).items()]
    if _serving(shortlist.result):
        items += [("serving constant", k, v) for k, v in asdict(ServingConstants()).items()]
    items += [
        ("ranking prior", "unknown fabric estimated as", " to ".join(ranking.UNKNOWN_FABRIC_RANGE)),
        (
            "ranking prior",
            "unknown fabric, worse end: TCP on a front-end NIC, Gb/s per node",
            ranking.UNKNOWN_GBPS_PER_NODE_WORST,
        ),
        (
            "ranking prior",
            "stated class, unknown bandwidth, Gb/s per GPU",
            " to ".join(f"{g:g}" for g in ranking.UNKNOWN_GBPS_PER_GPU),
        ),
        (
            "ranking prior",
            "stated Ethernet (TCP), unknown bandwidth, Gb/s per node",
            " to ".join(f"{g:g}" for g in ranking.STATED_TCP_GBPS_PER_NODE),
        ),
        ("ranking prior", "GPUs per HGX node", ranking.HGX_GPUS_PER_NODE),
        ("ranking prior", "order by", "the pessimistic end of each range"),
    ]
    return pd.DataFrame(items, columns=["kind", "name", "value"])


def _cell(value: Any) -> Any:
    if isinstance(value, list | tuple | dict):
        return str(value)
    return value


def answers_frame(shortlist: Shortlist) -> pd.DataFrame:
    rows = []
    for answer in shortlist.answers:
        evidence = answer.evidence[0] if answer.evidence else None  # the best one
        rows.append(
            {
                "provider": answer.provider,
                "question_id": answer.question_id,
                "answer": answer.value.value,
                "reason": answer.reason,
                "quote": evidence.quote if evidence else None,
                "source_url": evidence.source_url if evidence else None,
                "observed_at": evidence.observed_at.isoformat() if evidence else None,
                "obtained_by": evidence.obtained_by if evidence else None,
                "questionnaire_version": answer.questionnaire_version,
                "snapshot_id": answer.snapshot_id,
            }
        )
    return pd.DataFrame(rows)


def _rfi_frame(shortlist: Shortlist, provider: str) -> pd.DataFrame:
    given = {a.question_id: a for a in shortlist.answers if a.provider == provider}
    rows = []
    for question in shortlist.open_questions.get(provider, []):
        answer = given.get(question.id)
        rows.append(
            {
                "question_id": question.id,
                "question": question.text,
                "what we know": answer.value.value if answer else "unknown",
                "why": answer.reason if answer else "no current fact",
                "why it matters": question.why,
            }
        )
    return pd.DataFrame(
        rows, columns=["question_id", "question", "what we know", "why", "why it matters"]
    )


def _sheet_name(provider: str, used: set[str]) -> str:
    name = f"RFI {provider}"[:31]
    for char in "[]:*?/\\":
        name = name.replace(char, "_")
    base, n = name, 2
    while name in used:
        name = f"{base[:28]} {n}"
        n += 1
    used.add(name)
    return name


# at most this many offers side by side: a buyer compares a few, not the whole list
SIDE_BY_SIDE_MAX = 4


def _money(high: Any, low: Any = None) -> str:
    if high is None or pd.isna(high):
        return "not priced"
    if low is None or pd.isna(low) or round(float(low)) == round(float(high)):
        return f"${float(high):,.0f}"
    return f"${float(low):,.0f}-${float(high):,.0f}"


def side_by_side(shortlist: Shortlist) -> pd.DataFrame:
    """The first SIDE_BY_SIDE_MAX shortlisted offers in columns, one row per thing a buyer
    weighs: what it is, its fabric and the evidence for it, time, the whole cost and its parts,
    the questions still open and what acceptance stands at."""
    moe = _moe(shortlist.result.request.workload)
    serving = _serving(shortlist.result)
    items: dict[str, list[str]] = {}
    headers = []
    for _, row in shortlist.rows.head(SIDE_BY_SIDE_MAX).iterrows():
        provider = str(row["provider"])
        headers.append(f"#{row['rank']} {ranking.provider_name(provider)} {row['instance_type']}")
        evidence = (
            "not stated by any source"
            if pd.isna(row["fabric_class"])
            else f"{row['fabric_class']}, {row.get('fabric_source_grade') or 'ungraded'} "
            f"evidence dated {_date(row.get('fabric_source_date')) or 'unknown'} "
            f"({row['fabric_source_url']})"
        )
        questions = shortlist.open_questions.get(provider, [])
        checks = acceptance.verdicts(row, shortlist.result.calibrations, moe)
        all_reduce = next((v for v in checks if v.test.id == "nccl_all_reduce"), None)
        unknown = row.get("costs_unknown")
        values = {
            "Who you pay": str(row["sold_and_run_by"]),
            "Offer": str(row["offer_label"]),
            "GPUs": f"{row['gpus']:,} ({row['nodes']:,} nodes of {row['gpus_per_node']})",
            "Price": f"${row['price_usd_per_gpu_hour']:,.2f} per GPU-hour, "
            f"{row['pricing_tier']}"
            + (
                f", your quote {row['quote_id']}"
                if row.get("price_obtained_by") == "quote"
                else f", {row['price_obtained_by']}"
            ),
            "Fabric (as estimated)": str(row["fabric_estimated_as"]),
            "Fabric evidence": evidence,
            **(
                {
                    "Per million tokens": f"{_per_million(row['usd_per_million_output_tokens'])}"
                    f" out, {_per_million(row['usd_per_million_input_tokens'])} in",
                    "Latency reached": f"TPOT {_ms(row)} ms, TTFT {row['ttft_ms']:,.0f} ms",
                    "Load carried": f"{row['capacity_requests_per_s']:,.1f} requests/s "
                    f"({row['layout']})",
                    "Output tokens/s per GPU": _tokens(row),
                    "Error band (held out)": _band(row),
                }
                if serving
                else {
                    "Time to train": _days(row) + " days",
                    "Error band (held out)": _band(row),
                }
            ),
            "Whole cost": _money(row["total_cost_usd"], row["total_cost_usd_low"])
            + ("" if unknown is None or pd.isna(unknown) else " + ?"),
            "GPUs billed": _money(row["gpu_cost_usd"]),
            "Commitment beyond the run": _money(row["commitment_usd"]),
            "Storage": _money(row["storage_usd"]),
            "Egress": _money(row["egress_usd"]),
            "Support": _money(row["support_usd"])
            if not pd.isna(row["support_usd"])
            else "not included",
            "Verdict": str(row["verdict"]),
            **(
                {}
                if serving
                else {"Exposed communication": f"{row['comm_fraction_exposed']:.0%} of the step"}
            ),
            "Transparency score": "unknown"
            if pd.isna(row["transparency_score"])
            else f"{row['transparency_score']:.2f}",
            "Questions still open": f"{len(questions)}: "
            + (", ".join(q.id for q in questions) or "none"),
            "Acceptance: all-reduce": "not needed (one node)"
            if all_reduce is None
            else f"{all_reduce.status}: {all_reduce.threshold}",
        }
        for name, value in values.items():
            items.setdefault(name, []).append(value)
    frame = pd.DataFrame(items, index=headers).T
    frame.index.name = "what"
    return frame.reset_index()


def _write_xlsx(shortlist: Shortlist, path: Path) -> None:
    rows = csv_frame(shortlist)
    chosen = SERVING_SHORTLIST_COLUMNS if _serving(shortlist.result) else SHORTLIST_COLUMNS
    decisive = [column for column in chosen if column in rows.columns]
    details = [*ROW_IDENTITY, *(c for c in rows.columns if c not in decisive)]
    sheets = {
        "shortlist": (rows[decisive], len(ROW_IDENTITY)),
        "details": (rows[details], len(ROW_IDENTITY)),
        "assumptions": (assumptions(shortlist), 0),
        "transparency": (answers_frame(shortlist), 0),
        "fabric sensitivity": (shortlist.sensitivity, 0),
        "side by side": (side_by_side(shortlist), 0),
        "curves": (shortlist.curves, 0),
    }
    used = set(sheets)
    for provider in shortlist.open_questions:
        sheets[_sheet_name(provider, used)] = (_rfi_frame(shortlist, provider), 0)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, (frame, frozen_columns) in sheets.items():
            _excel_frame(frame).to_excel(writer, sheet_name=name, index=False)
            _style(writer.sheets[name], list(frame.columns), frozen_columns)


# ---- the workbook's columns: headers and number formats


@dataclass(frozen=True)
class NumberFormat:
    """How a number reads: Excel's format for the cell, and the same in Python's format
    mini-language, to measure the width the cell needs."""

    excel: str
    python: str


USD = NumberFormat('"$"#,##0', "${:,.0f}")
USD_CENTS = NumberFormat('"$"#,##0.00', "${:,.2f}")
USD_TENTHS_OF_CENTS = NumberFormat('"$"#,##0.000', "${:,.3f}")
COUNT = NumberFormat("#,##0", "{:,.0f}")
ONE_DECIMAL = NumberFormat("#,##0.0", "{:,.1f}")
TWO_DECIMALS = NumberFormat("0.00", "{:.2f}")
THREE_DECIMALS = NumberFormat("0.000", "{:.3f}")
PERCENT = NumberFormat("0%", "{:.0%}")
PERCENT_ONE_DECIMAL = NumberFormat("0.0%", "{:.1%}")
DATE = NumberFormat("yyyy-mm-dd", "{:%Y-%m-%d}")
TIME = NumberFormat("yyyy-mm-dd hh:mm", "{:%Y-%m-%d %H:%M}")

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class Column:
    header: str
    number: NumberFormat | None = None  # None: text, or a number as General shows it
    scale: float = 1.0  # the cell holds value * scale (hours shown as days)


def _in_days(header: str) -> Column:
    """A duration the rows hold in hours, shown to people in days."""
    return Column(header, ONE_DECIMAL, 1.0 / HOURS_PER_DAY)


FABRIC_NAMES = {"infiniband": "InfiniBand", "ethernet": "plain Ethernet"}

# every column a sheet of the workbook shows, by its name in the frames (and the CSV)
COLUMNS: dict[str, Column] = {
    "rank": Column("Rank", COUNT),
    "provider": Column("Provider (runs on)"),
    "sold_by": Column("Sold by"),
    "sold_and_run_by": Column("Who you pay"),
    "offer_label": Column("Offer"),
    "instance_type": Column("Offer id"),
    "region": Column("Region"),
    "regions": Column("Regions"),
    "region_count": Column("Regions (count)", COUNT),
    "pricing_tier": Column("Pricing tier"),
    "gpu_model": Column("GPU model"),
    "gpus": Column("GPUs", COUNT),
    "gpus_per_node": Column("GPUs per node", COUNT),
    "nodes": Column("Nodes", COUNT),
    "time_to_train_h": _in_days("Time to train (days)"),
    "time_to_train_h_low": _in_days("Time to train, best fabric case (days)"),
    "cost_usd": Column("GPU time (USD)", USD),
    "cost_usd_low": Column("GPU time, best fabric case (USD)", USD),
    "axis": Column("Curve (GPU count or bandwidth)"),
    "x": Column("GPUs, or Gb/s per GPU", ONE_DECIMAL),
    "assumed": Column("Assumed for the curve"),
    "total_cost_usd": Column("Whole cost (USD)", USD),
    "total_cost_usd_low": Column("Whole cost, best fabric case (USD)", USD),
    "gpu_cost_usd": Column("GPUs billed (USD)", USD),
    "commitment_usd": Column("Commitment beyond the run (USD)", USD),
    "storage_usd": Column("Storage (USD)", USD),
    "egress_usd": Column("Egress (USD)", USD),
    "support_usd": Column("Support (USD)", USD),
    "costs_unknown": Column("Costs nobody prices"),
    "cost_basis": Column("How the cost is made"),
    # the model's error held out (fabricscope/model/error_bands.py): a training row's of its
    # time, a served row's of its output tokens/s per GPU at the latency target
    "error_band_pct": Column("Error band, held out (± %, p90)", ONE_DECIMAL),
    "error_bias_pct": Column("Error bias, held out (%, + reads too fast)", ONE_DECIMAL),
    "error_band_runs": Column("Published runs behind the error band", COUNT),
    "error_band_cell": Column("Error band from"),
    "time_to_train_h_band_low": _in_days("Time to train, error band's low end (days)"),
    "time_to_train_h_band_high": _in_days("Time to train, error band's high end (days)"),
    "cost_usd_band_low": Column("GPU time, error band's low end (USD)", USD),
    "cost_usd_band_high": Column("GPU time, error band's high end (USD)", USD),
    # a served model's (error_bands.SERVING: the band is of its output tokens/s per GPU)
    "tokens_per_s_per_gpu_band_low": Column("Output tokens/s per GPU, error band's low end", COUNT),
    "tokens_per_s_per_gpu_band_high": Column(
        "Output tokens/s per GPU, error band's high end", COUNT
    ),
    "usd_per_million_output_tokens_band_low": Column(
        "Per million output tokens, error band's low end (USD)", USD_TENTHS_OF_CENTS
    ),
    "usd_per_million_output_tokens_band_high": Column(
        "Per million output tokens, error band's high end (USD)", USD_TENTHS_OF_CENTS
    ),
    "usd_per_million_tokens": Column("Cost per million tokens (USD)", USD_TENTHS_OF_CENTS),
    "mfu": Column("MFU", PERCENT),
    "verdict": Column("Verdict"),
    "comm_fraction_exposed": Column("Exposed communication (share of step)", PERCENT_ONE_DECIMAL),
    "fabric_share_of_comm": Column("Inter-node fabric share of communication", PERCENT),
    "layout": Column("Parallel layout"),
    "memory_gb_per_gpu": Column("Memory per GPU (GB)", ONE_DECIMAL),
    "fabric_class": Column("Fabric stated"),
    "fabric_estimated_as": Column("Fabric (costed as)"),
    "fabric_gbps_costed": Column("Fabric per GPU as costed, worse end (Gb/s)", ONE_DECIMAL),
    "fabric_range": Column("Fabric unknown: costed as a range"),
    "multi_node": Column("Multi-node"),
    "multi_node_reason": Column("Multi-node: why"),
    "fabric_gbps_per_gpu": Column("Fabric per GPU (Gb/s)", COUNT),
    "fabric_source_url": Column("Fabric source"),
    "fabric_source_grade": Column("Fabric source grade"),
    "fabric_source_date": Column("Fabric source dated", DATE),
    "fabric_observed_at": Column("Fabric read (UTC)", TIME),
    "fabric_evidence": Column("Fabric evidence"),
    "price_usd_per_gpu_hour": Column("Price per GPU-hour (USD)", USD_CENTS),
    "price_basis": Column("Price basis"),
    "price_source_url": Column("Price source"),
    "price_observed_at": Column("Price observed (UTC)", TIME),
    "price_obtained_by": Column("Price obtained by"),
    "price_published_by": Column("Price published by"),
    "quote_id": Column("Your quote"),
    "quote_valid_until": Column("Your quote valid until", DATE),
    "data_age_days": Column("Price age (days)", COUNT),
    "transparency_score": Column("Transparency score", TWO_DECIMALS),
    "pareto": Column("On the time-cost frontier"),
    "score": Column("Ranking score", THREE_DECIMALS),
    "step_time_s": Column("Step time (s)", THREE_DECIMALS),
    # a served model's (fabricscope/rank/estimators.py ServingEstimator)
    "usd_per_million_output_tokens": Column("Per million output tokens (USD)", USD_TENTHS_OF_CENTS),
    "usd_per_million_input_tokens": Column("Per million input tokens (USD)", USD_TENTHS_OF_CENTS),
    "tpot_ms": Column("Time per output token (ms)", ONE_DECIMAL),
    "tpot_ms_low": Column("Time per output token, best fabric case (ms)", ONE_DECIMAL),
    "ttft_ms": Column("Time to first token (ms)", COUNT),
    "tokens_per_s_per_gpu": Column("Output tokens/s per GPU", COUNT),
    "tokens_per_s_per_gpu_low": Column("Output tokens/s per GPU, best fabric case", COUNT),
    "capacity_requests_per_s": Column("Requests/s carried", ONE_DECIMAL),
    "capacity_requests_per_s_low": Column("Requests/s carried, best fabric case", ONE_DECIMAL),
    "load_requests_per_s": Column("Load (requests/s)", ONE_DECIMAL),
    "replicas": Column("Replicas", COUNT),
    "replica_gpus": Column("GPUs per replica", COUNT),
    "batch": Column("Batch per replica (sequences)", COUNT),
    "fabric_share": Column("Fabric share of a decode step", PERCENT_ONE_DECIMAL),
    "service_hours": Column("Service hours", COUNT),
    **{
        part.field: Column(part.heading, THREE_DECIMALS)
        for part in (*MODEL_STEP_PARTS, FAILURE_PART)
    },
    "goodput": Column("Goodput", PERCENT_ONE_DECIMAL),
    "notes": Column("Notes"),
    "offer_key": Column("Offer key"),
    "snapshot_id": Column("Snapshot"),
    # the fabric sensitivity sheet
    **{
        f"time_to_train_h_{fabric}": _in_days(f"Time to train on {name} (days)")
        for fabric, name in FABRIC_NAMES.items()
    },
    **{
        f"cost_usd_{fabric}": Column(f"Cost on {name} (USD)", USD)
        for fabric, name in FABRIC_NAMES.items()
    },
    **{
        f"tpot_ms_{fabric}": Column(f"Time per output token on {name} (ms)", ONE_DECIMAL)
        for fabric, name in FABRIC_NAMES.items()
    },
    **{
        f"tokens_per_s_per_gpu_{fabric}": Column(f"Output tokens/s per GPU on {name}", COUNT)
        for fabric, name in FABRIC_NAMES.items()
    },
    **{
        f"usd_per_million_output_tokens_{fabric}": Column(
            f"Per million output tokens on {name} (USD)", USD_TENTHS_OF_CENTS
        )
        for fabric, name in FABRIC_NAMES.items()
    },
    # the assumptions, transparency and RFI sheets
    "kind": Column("Kind"),
    "name": Column("Name"),
    "value": Column("Value"),
    "question_id": Column("Question id"),
    "question": Column("Question"),
    "answer": Column("Answer"),
    "reason": Column("Reason"),
    "quote": Column("Quote"),
    "source_url": Column("Source"),
    "observed_at": Column("Observed (UTC)"),
    "obtained_by": Column("Obtained by"),
    "questionnaire_version": Column("Questionnaire version"),
    "what we know": Column("What we know"),
    "why": Column("Why"),
    "why it matters": Column("Why it matters"),
}

# the shortlist sheet: what a buyer decides on, in this order (the rest is on ``details``,
# after ROW_IDENTITY, which both sheets start with)
ROW_IDENTITY = ("rank", "provider", "offer_label")
# what the offer is and costs by the hour, first on both kinds of shortlist sheet
OFFER_HEAD = (
    *ROW_IDENTITY,
    "gpu_model",
    "gpus_per_node",
    "gpus",
    "sold_and_run_by",
    "instance_type",
    "region",
    "pricing_tier",
    "fabric_estimated_as",
    "price_usd_per_gpu_hour",
)
SHORTLIST_COLUMNS = (
    *OFFER_HEAD,
    "time_to_train_h",
    "error_band_pct",
    "total_cost_usd",
    "costs_unknown",
    "cost_usd",
    "mfu",
    "comm_fraction_exposed",
    "verdict",
)

# a served model's shortlist sheet
SERVING_SHORTLIST_COLUMNS = (
    *OFFER_HEAD,
    "usd_per_million_output_tokens",
    "usd_per_million_input_tokens",
    "tokens_per_s_per_gpu",
    "error_band_pct",
    "tpot_ms",
    "ttft_ms",
    "capacity_requests_per_s",
    "layout",
    "total_cost_usd",
    "costs_unknown",
    "verdict",
)

MAX_WIDTH = 60  # characters: longer text (URLs, quotes, notes) is cut off at the cell's edge
HEADER_WIDTH = 24  # a longer header wraps rather than widening its column


def column(name: str) -> Column:
    """The column's header and format; a column without an entry reads as its name."""
    if name in COLUMNS:
        return COLUMNS[name]
    if not re.fullmatch(r"[a-z0-9_]+", name):
        return Column(name)  # already a heading (an offer's, side by side)
    return Column(name.replace("_", " ").capitalize())


def _excel_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells as the workbook holds them: scaled (hours to days), and timestamps in UTC
    without the zone (Excel has no time zones)."""
    out = frame.copy()
    for name in out.columns:
        values = out[name]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            out[name] = values.dt.tz_convert("UTC").dt.tz_localize(None)
        elif column(name).scale != 1.0:
            out[name] = values * column(name).scale
    return out


def _shown(value: Any, number: NumberFormat | None) -> str:
    """The text a cell shows, to fit its column's width."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if number is not None and not isinstance(value, str | bool):
        return number.python.format(value)
    return str(value)


def _style(sheet: Worksheet, names: Sequence[str], frozen_columns: int) -> None:
    """Human headers, bold and frozen; number formats; widths fitted to the content."""
    sheet.freeze_panes = sheet.cell(row=2, column=frozen_columns + 1).coordinate
    for index, name in enumerate(names, start=1):
        spec = column(name)
        header = sheet.cell(row=1, column=index)
        header.value = spec.header
        header.font = Font(bold=True)
        header.alignment = Alignment(wrap_text=True, vertical="top")
        widest = min(len(spec.header), HEADER_WIDTH)
        for (cell,) in sheet.iter_rows(min_row=2, min_col=index, max_col=index):
            if spec.number is not None and isinstance(cell.value, int | float | datetime):
                cell.number_format = spec.number.excel
            widest = max(widest, len(_shown(cell.value, spec.number)))
        sheet.column_dimensions[get_column_letter(index)].width = min(widest + 2, MAX_WIDTH)


# ---- the memo


def _days(row: pd.Series) -> str:
    high, low = row["time_to_train_h"] / 24, row["time_to_train_h_low"] / 24
    return f"{high:,.1f}" if round(high, 1) == round(low, 1) else f"{low:,.1f}-{high:,.1f}"


def _ms(row: pd.Series) -> str:
    """A served model's time per output token (ms), a range where the fabric is unknown."""
    high, low = row["tpot_ms"], row["tpot_ms_low"]
    return f"{high:,.0f}" if round(high) == round(low) else f"{low:,.0f}-{high:,.0f}"


def _per_million(value: float) -> str:
    """USD per million tokens: cents from $1 up, tenths of a cent below."""
    return f"${value:,.2f}" if abs(value) >= 1 else f"${value:,.3f}"


def _usd(row: pd.Series) -> str:
    """The whole cost as a range; '+ ?' where a part of it nobody prices."""
    high, low = row["total_cost_usd"], row["total_cost_usd_low"]
    text = f"${high:,.0f}" if round(high) == round(low) else f"${low:,.0f}-${high:,.0f}"
    unknown = row.get("costs_unknown")
    return text if unknown is None or pd.isna(unknown) else f"{text} + ?"


def _tokens(row: pd.Series) -> str:
    """A served model's output tokens/s per GPU, a range (worse end first) where the fabric
    is unknown and matters."""
    high, low = row["tokens_per_s_per_gpu"], row["tokens_per_s_per_gpu_low"]
    if pd.isna(low) or round(high) == round(low):
        return f"{high:,.0f}"
    return f"{min(high, low):,.0f}-{max(high, low):,.0f}"


def _band(row: pd.Series, short: bool = False) -> str:
    """A row's error band (a training row's of its time, a served row's of its tokens/s per
    GPU): '±16%' (``short``), or with the runs it comes from."""
    percent = row.get("error_band_pct")
    if percent is None or pd.isna(percent):
        return "unknown"
    if short:
        return error_bands.plus_minus(float(percent))
    return error_bands.band_text(percent, row["error_band_cell"], row["error_band_runs"])


def _band_lines(rows: pd.DataFrame) -> list[str]:
    """How far to trust the shortlist's times and costs: each error band among its rows in
    words, and the days and GPU time at the band's ends per offer."""
    bands = error_bands.notes(rows.to_dict("records"))
    if not bands:
        return []
    lines = [
        "",
        "## How far to trust the times and costs",
        "",
        "The model's error on published runs of the same kind of job that it was not fitted "
        "for (each held out by its GPU generation and by its software stack; docs/MODEL.md, "
        '"Error band"). The "± (held out)" column above is:',
        "",
        *(f"- {note[0].upper()}{note[1:]}." for note in bands),
        "",
        "With the band, from each offer's better fabric end less it to its worse end plus it "
        "(the GPU time only: storage, egress and support do not move with it):",
        "",
    ]
    for _, row in rows.iterrows():
        low, high = row.get("time_to_train_h_band_low"), row.get("time_to_train_h_band_high")
        if high is None or pd.isna(high):
            continue
        cost_low, cost_high = row.get("cost_usd_band_low"), row["cost_usd_band_high"]
        days = f"up to {high / 24:,.1f}" if pd.isna(low) else f"{low / 24:,.1f}-{high / 24:,.1f}"
        cost = (
            f"up to ${cost_high:,.0f}"
            if cost_low is None or pd.isna(cost_low)
            else f"${cost_low:,.0f}-${cost_high:,.0f}"
        )
        lines.append(
            f"- {_md(row['provider'])} `{_md(row['instance_type'])}`: {days} days, GPU time "
            f"{cost} ({_band(row, short=True)}, {_md(row['error_band_cell'])})."
        )
    return lines


def _serving_band_lines(rows: pd.DataFrame) -> list[str]:
    """How far to trust a served model's tokens/s and price per token: each error band among
    the rows in words, and the tokens/s per GPU and USD per million output tokens at the
    band's ends per offer."""
    records = rows.to_dict("records")
    bands = error_bands.notes(records, error_bands.SERVING)
    if not bands:
        return []
    # a replica across nodes: no held-out serving run crossed a fabric
    if any(spans_nodes(r.get("verdict")) for r in records):
        bands.append(error_bands.SERVING_FABRIC_CAVEAT)
    lines = [
        "",
        "## How far to trust the throughput and the price per token",
        "",
        "The serving model's error on published serving measurements of the same kind of model "
        "that it was not fitted for (each held out by its source, its source family and its GPU "
        'generation; docs/MODEL.md, "Serving error band"): the error of output tokens/s per GPU '
        'at the latency target. The "± (held out)" column above is:',
        "",
        *(f"- {note[0].upper()}{note[1:]}." for note in bands),
        "",
        "With the band, output tokens/s per GPU from each offer's worse fabric end less it to "
        "its better end plus it, and USD per million output tokens as each token's GPU time "
        "moves (a prediction X% too fast serves 1 / (1 + X/100) of it):",
        "",
    ]
    for _, row in rows.iterrows():
        low, high = (
            row.get("tokens_per_s_per_gpu_band_low"),
            row.get("tokens_per_s_per_gpu_band_high"),
        )
        if low is None or pd.isna(low):
            continue
        usd_low = row.get("usd_per_million_output_tokens_band_low")
        usd_high = row.get("usd_per_million_output_tokens_band_high")
        tokens = (
            f"at least {low:,.0f}" if high is None or pd.isna(high) else f"{low:,.0f}-{high:,.0f}"
        )
        if usd_high is None or pd.isna(usd_high):
            usd = "not priced"
        elif usd_low is None or pd.isna(usd_low):
            usd = f"up to {_per_million(usd_high)}"
        else:
            usd = f"{_per_million(usd_low)}-{_per_million(usd_high)}"
        lines.append(
            f"- {_md(row['provider'])} `{_md(row['instance_type'])}`: {tokens} output tokens/s "
            f"per GPU, {usd} per million output tokens ({_band(row, short=True)}, "
            f"{_md(row['error_band_cell'])})."
        )
    return lines


def _curve_lines(shortlist: Shortlist) -> list[str]:
    """Per shortlisted offer: days and whole cost against the GPU count (with the verdict),
    then against the inter-node bandwidth per GPU."""
    frame = shortlist.curves
    if frame.empty:
        return []
    lines = [
        "",
        "## How time and cost move",
        "",
        "Each offer ranked again at other GPU counts (whole nodes) and, for multi-node jobs, "
        "with other inter-node bandwidths per GPU on its own fabric class: what more GPUs or a "
        "faster or slower fabric is worth for this job. Worse ends, whole costs.",
    ]
    for _key, rows in frame.groupby("offer_key", sort=False):
        first = rows.iloc[0]
        lines += ["", f"{_md(first['provider'])} `{_md(first['instance_type'])}`:", ""]
        counts = rows[rows["axis"] == "gpus"]
        if not counts.empty:
            lines += ["| GPUs | days | whole cost | verdict | exposed communication |"]
            lines += ["|---:|---:|---:|---|---:|"]
            for _, point in counts.iterrows():
                lines.append(
                    f"| {int(point['gpus']):,} | {_days(point)} | "
                    f"{_money(point['total_cost_usd'], point['total_cost_usd_low'])} | "
                    f"{_md(point['verdict'])} | {point['comm_fraction_exposed']:.0%} |"
                )
        bandwidths = rows[rows["axis"] == "gbps_per_gpu"]
        if not bandwidths.empty:
            assumed = bandwidths["assumed"].dropna()
            lines += [
                "",
                f"At {int(bandwidths['gpus'].iloc[0]):,} GPUs"
                + (f" ({assumed.iloc[0]}: the offer states no class)" if len(assumed) else "")
                + ":",
                "",
                "| Gb/s per GPU | days | whole cost | exposed communication |",
                "|---:|---:|---:|---:|",
            ]
            for _, point in bandwidths.iterrows():
                lines.append(
                    f"| {point['x']:g} | {_days(point)} | "
                    f"{_money(point['total_cost_usd'], point['total_cost_usd_low'])} | "
                    f"{point['comm_fraction_exposed']:.0%} |"
                )
    return lines


def _cost_lines(rows: pd.DataFrame, serving: bool = False) -> list[str]:
    """Per shortlisted offer: how its whole cost is made, and the parts nobody prices."""
    what = (
        "the GPUs billed for the service's hours (more where a reserved term, minimum rental "
        "or booking says so), plus storage for the served weights"
        if serving
        else "the GPUs billed, which is the run's time unless a reserved term, minimum rental "
        "or booking makes it more, plus storage for the checkpoints (and the data, if given) "
        "and downloading the trained weights"
    )
    lines = [
        "",
        "## The whole cost",
        "",
        f"The cost is the whole cost of the job (the worse end): {what}, at each provider's "
        "stated price (reference/provider_costs.csv, sourced) or the price given with the "
        'request. "+ ?" marks a part nobody prices: ask for it.',
        "",
    ]
    for _, row in rows.iterrows():
        unknown = row.get("costs_unknown")
        asked = "" if unknown is None or pd.isna(unknown) else f" **Not priced: {unknown}.**"
        lines.append(
            f"- {_md(row['provider'])} `{_md(row['instance_type'])}`: "
            f"${row['total_cost_usd']:,.0f} ({_md(row['cost_basis'])}).{asked}"
        )
    return lines


def _md(value: Any) -> str:
    text = (
        "unknown" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)
    )
    return text.replace("|", "\\|").replace("\n", " ")


def _regions(row: pd.Series) -> str:
    """'us-east-1', or 'us-east-1 and 16 more regions' where one price covers several."""
    count, region = row.get("region_count"), row.get("region")
    if region is None or pd.isna(region) or not region:
        return "region not stated"
    if count is None or pd.isna(count) or count <= 1:
        return str(row["region"])
    return f"{row['region']} and {int(count) - 1} more regions"


def _training_verdict_lines(shortlist: Shortlist) -> list[str]:
    """The top offer's verdict and what the fabric is worth for a training job."""
    best = shortlist.rows.iloc[0]
    lines = [
        "",
        "## Verdict",
        "",
        f"The top offer ({best['provider']}, {best['offer_label']}, {best['sold_and_run_by']}) is "
        f"**{best['verdict']}** for this job: {best['comm_fraction_exposed']:.0%} of its step "
        f"is exposed communication, {best['fabric_share_of_comm']:.0%} of that on the "
        f"inter-node fabric; layout {best['layout']}, {best['memory_gb_per_gpu']:.0f} GB per GPU.",
        "",
        "## What the fabric is worth for this job",
        "",
        "The same offers estimated as if on InfiniBand and on plain Ethernet (TCP), as "
        "`fabricscope rank --what-if-fabric` and the app's what-if do. "
        + " ".join(ranking.what_if_rule(f, closing=False) for f in SENSITIVITY_CLASSES)
        + " One-node jobs do not change.",
        "",
        "| provider | offer | days on InfiniBand | days on Ethernet | Ethernet costs more by |",
        "|---|---|---:|---:|---:|",
    ]
    for _, row in shortlist.sensitivity.iterrows():
        offer = f"{_md(row['offer_label'])} (`{_md(row['instance_type'])}`)"
        ib, eth = row.get("time_to_train_h_infiniband"), row.get("time_to_train_h_ethernet")
        if ib is None or eth is None or pd.isna(ib) or pd.isna(eth):
            lines.append(f"| {_md(row['provider'])} | {offer} | n/a | n/a | n/a |")
            continue
        extra = row["cost_usd_ethernet"] - row["cost_usd_infiniband"]
        lines.append(
            f"| {_md(row['provider'])} | {offer} | {ib / 24:,.1f} | "
            f"{eth / 24:,.1f} | ${extra:,.0f} ({eth / ib - 1:+.0%} time) |"
        )
    return lines


def _serving_verdict_lines(shortlist: Shortlist) -> list[str]:
    """The top offer's verdict and what the fabric is worth for a served model: nothing
    while a replica fits one node; its share of a decode step when a replica spans nodes."""
    best = shortlist.rows.iloc[0]
    lines = [
        "",
        "## Verdict",
        "",
        f"The top offer ({best['provider']}, {best['offer_label']}, {best['sold_and_run_by']}): "
        f"**{best['verdict']}**. A replica runs {best['layout']} on {best['replica_gpus']:.0f} "
        f"GPUs ({best['memory_gb_per_gpu']:.0f} GB per GPU); {best['replicas']:.0f} "
        f"replica{'' if best['replicas'] == 1 else 's'} carry "
        f"{best['capacity_requests_per_s']:,.1f} requests/s at "
        f"{best['tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU.",
        "",
        "## What the fabric is worth for this service",
        "",
        "The same offers estimated as if on InfiniBand and on plain Ethernet (TCP), as "
        "`fabricscope rank --serve --what-if-fabric` and the app's what-if do. "
        + " ".join(ranking.what_if_rule(f, closing=False) for f in SENSITIVITY_CLASSES)
        + " A replica inside one node never touches the inter-node fabric: what it serves and "
        "costs is the same on both. Only a replica that spans nodes (pipeline stages, a MoE "
        "model's experts, or prefill and decode apart) reads it; a slower fabric may need more "
        "GPUs to carry the load, which the price per token includes.",
        "",
        "| provider | offer | output tokens/s per GPU on InfiniBand | on Ethernet "
        "| $/M output on InfiniBand | on Ethernet | TPOT on InfiniBand (ms) | on Ethernet |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for _, row in shortlist.sensitivity.iterrows():
        offer = f"{_md(row['offer_label'])} (`{_md(row['instance_type'])}`)"
        cells = [
            row.get(f"{name}_{fabric}")
            for name in ("tokens_per_s_per_gpu", "usd_per_million_output_tokens", "tpot_ms")
            for fabric in SENSITIVITY_CLASSES
        ]
        if any(value is None or pd.isna(value) for value in cells):
            lines.append(f"| {_md(row['provider'])} | {offer} |" + " n/a |" * len(cells))
            continue
        ib_tokens, eth_tokens, ib_usd, eth_usd, ib_tpot, eth_tpot = cells
        lines.append(
            f"| {_md(row['provider'])} | {offer} | {ib_tokens:,.0f} | {eth_tokens:,.0f} "
            f"| {_per_million(ib_usd)} | {_per_million(eth_usd)} | {ib_tpot:,.1f} "
            f"| {eth_tpot:,.1f} |"
        )
    return lines


def _serving_load(job: Any) -> str:
    if job.requests_per_s is None:
        return "served (no load given)"
    return f"served at {job.requests_per_s:,g} requests/s"


def _training_workload_lines(job: Any) -> list[str]:
    return [
        f"- {job.total_params / 1e9:,.1f}B parameters"
        + (f" ({job.active_params / 1e9:,.1f}B active per token, MoE)" if job.moe else "")
        + f", {job.layers} layers, hidden size {job.hidden_size}, sequence {job.seq_len}",
        f"- {job.tokens:,.0f} training tokens, {job.batch_tokens:,} tokens per step, "
        f"{job.precision_label}, ZeRO stage {job.zero_stage}, {job.stack.value} software stack"
        + (", LoRA fine-tune" if job.lora else ""),
    ]


def _serving_workload_lines(job: Any) -> list[str]:
    arch = job.architecture
    targets = ", ".join(
        f"{name} {value:,g} ms"
        for name, value in (("time to first token", job.ttft_ms), ("per output token", job.tpot_ms))
        if value is not None
    )
    at = "means" if job.latency_percentile == "mean" else f"at {job.latency_percentile}"
    lengths = job.lengths_text()
    how = [
        text
        for on, text in (
            (
                job.disaggregated,
                "prefill and decode on separate GPUs, each request's KV cache handed over",
            ),
            (
                job.attention_data_parallel and arch.moe is not None,
                "attention data-parallel: the routed experts split over a replica's GPUs, "
                "across nodes when one does not hold them",
            ),
        )
        if on
    ]
    return [
        f"- {arch.total_params / 1e9:,.1f}B parameters"
        + (f" ({arch.active_params / 1e9:,.1f}B active per token, MoE)" if arch.moe else "")
        + f", {arch.layers} layers, hidden size {arch.hidden_size}; weights in {job.weights}, "
        f"KV cache in {job.kv_cache} ({job.weight_bytes / 1e9:,.0f} GB of weights)",
        f"- {lengths}; "
        + (
            f"{job.requests_per_s:,g} requests/s"
            if job.requests_per_s is not None
            else "no load given: every rented GPU serving"
        )
        + f"; targets ({at}): {targets or 'none'}; for {job.hours:,g} hours",
        *(f"- {text}" for text in how),
        "- USD per million tokens: the GPUs' cost split between input (prefill) and output "
        "(decoding) tokens by the time each takes on a replica; latencies "
        + (
            "are the model's means"
            if job.latency_percentile == "mean"
            else f"at {job.latency_percentile}: the model's means times the ratio MLPerf's "
            "runs measured"
        ),
    ]


TRAINING_TABLE_HEAD = [
    "| rank | provider | GPU | GPUs per node | offer | who you pay | GPUs | days | cost "
    "| ± (held out) | $/M tokens | MFU | verdict | fabric | transparency | price age |",
    "|---:|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---|",
]
SERVING_TABLE_HEAD = [
    "| rank | provider | GPU | GPUs per node | offer | who you pay | GPUs | $/M output | "
    "$/M input | tok/s per GPU | ± (held out) | TPOT (ms) | TTFT (ms) | requests/s | cost "
    "| verdict | fabric | transparency | price age |",
    "|---:|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|",
]


def memo(shortlist: Shortlist) -> str:
    result, rows = shortlist.result, shortlist.rows
    request, job = result.request, result.request.workload
    snapshot = result.snapshot
    when = snapshot.published_at.strftime("%Y-%m-%d %H:%M UTC") if snapshot else "unknown"
    prepared = result.as_of or datetime.now(UTC)
    serving = _serving(result)
    on = _serving_load(job) if serving else f"on {', '.join(map(str, request.gpu_counts))} GPUs"
    lines = [
        f"# Procurement memo: {job.name} {on}",
        "",
        f"Prepared {prepared:%Y-%m-%d} by fabricscope from warehouse snapshot "
        f"{shortlist.snapshot_id} (published {when}). Objective: {request.objective}; "
        f"pricing tiers: {', '.join(t.value for t in request.tiers)}. "
        + (
            "Throughput, latency and costs are model estimates (docs/MODEL.md, Serving); each "
            "offer is ranked at the fewest GPUs tried that carry the load at the latency "
            "targets; where a provider has not stated its fabric and a replica spans nodes, "
            "latency is a range from plain Ethernet to InfiniBand and the offers are ordered "
            "by the worse end."
            if serving
            else "Times and costs are model estimates (docs/MODEL.md); where a provider has "
            "not stated its fabric, they are a range from plain Ethernet to InfiniBand and the "
            "offers are ordered by the worse end."
        ),
        "",
        "## Workload",
        "",
        *(_serving_workload_lines(job) if serving else _training_workload_lines(job)),
        "",
        "## Shortlist",
        "",
        *(SERVING_TABLE_HEAD if serving else TRAINING_TABLE_HEAD),
    ]
    old_prices = []
    for _, row in rows.iterrows():
        score = row["transparency_score"]
        age = row.get("data_age_days")
        stale = age is not None and not pd.isna(age) and age > STALE_PRICE_DAYS
        if stale:
            old_prices.append(f"{row['provider']} {row['instance_type']} ({age:,.0f} days)")
        age_text = "unknown" if age is None or pd.isna(age) else f"{age:,.0f} days"
        numbers = (
            f"{_per_million(row['usd_per_million_output_tokens'])} | "
            f"{_per_million(row['usd_per_million_input_tokens'])} | {_tokens(row)} | "
            f"{_band(row, short=True)} | {_ms(row)} | "
            f"{row['ttft_ms']:,.0f} | {row['capacity_requests_per_s']:,.1f} | {_usd(row)}"
            if serving
            else f"{_days(row)} | {_usd(row)} | {_band(row, short=True)} | "
            f"{row['usd_per_million_tokens']:,.3f} | {row['mfu']:.0%}"
        )
        lines.append(
            f"| {row['rank']} | {_md(row['provider'])} | {_md(ranking.gpu_name(row['gpu_model']))} "
            f"| {row['gpus_per_node']} | {_md(row['offer_label'])} (`{_md(row['instance_type'])}`, "
            f"{_md(_regions(row))}, {_md(row['pricing_tier'])}) | {_md(row['sold_and_run_by'])} | "
            f"{row['gpus']} | {numbers} | {_md(row['verdict'])} | "
            f"{_md(row['fabric_estimated_as'])} | "
            f"{'unknown' if pd.isna(score) else f'{score:.2f}'} | "
            f"{age_text}{' **(old: re-quote)**' if stale else ''} |"
        )
    if old_prices:
        lines += [
            "",
            f"**Caveat: {len(old_prices)} price(s) were observed more than {STALE_PRICE_DAYS} "
            f"days before {prepared:%Y-%m-%d}** and may have changed: "
            + "; ".join(_md(p) for p in old_prices)
            + ". Ask each provider for a current quote before deciding.",
        ]
    lines += _serving_band_lines(rows) if serving else _band_lines(rows)
    lines += _cost_lines(rows, serving)
    lines += _curve_lines(shortlist)
    lines += _serving_verdict_lines(shortlist) if serving else _training_verdict_lines(shortlist)
    lines += [
        "",
        "## Questions to send each provider",
        "",
        "The questions each provider's published evidence leaves open, and what it has answered "
        "in reply. Its answers go back in through the answers template written beside this "
        f"memo (`*{ANSWERS_SUFFIX}`: one row per open question) and `fabricscope answers "
        "import`; they then count as the provider's own evidence, dated the day given.",
        "",
    ]
    for provider, questions in shortlist.open_questions.items():
        score = shortlist.scores.get(provider)
        header = f"### {provider}"
        if score is not None:
            header += (
                f" (transparency {score.score:.2f}, questionnaire {score.questionnaire_version})"
            )
        lines += [header, ""]
        lines += _who_quotes(rows[rows["provider"] == provider])
        lines += _replies(shortlist, provider)
        if not questions:
            lines += ["Every question is answered with evidence; nothing to ask.", ""]
            continue
        given = {a.question_id: a for a in shortlist.answers if a.provider == provider}
        for number, question in enumerate(questions, start=1):
            answer = given.get(question.id)
            known = f" (what we know: {answer.value.value}; {answer.reason})" if answer else ""
            lines.append(f"{number}. {question.text}{known}")
        lines.append("")
    lines += _acceptance_lines(shortlist)
    lines += ["## Sources", ""]
    for _, row in rows.iterrows():
        price_seen = _md(_date(row["price_observed_at"]))
        if row["price_obtained_by"] == "quote":
            until = _date(row.get("quote_valid_until"))
            price = (
                f"price {row['price_usd_per_gpu_hour']:g} USD per GPU-hour quoted by "
                f"{_md(row['price_published_by'])} on {price_seen}, "
                + (f"valid until {until}" if until else "no end date stated")
            )
        else:
            price = (
                f"price {row['price_usd_per_gpu_hour']:g} USD per GPU-hour published by "
                f"{_md(row['price_published_by'])}, from {_md(row['price_source_url'])} "
                f"(observed {price_seen}, {_md(row['price_obtained_by'])})"
            )
        lines.append(
            f"- {_md(row['provider'])} {_md(row['instance_type'])} "
            f"({_md(row['sold_and_run_by'])}): {price}; fabric: "
            + (
                f"{_md(row['fabric_class'])} from {_md(row['fabric_source_url'])} "
                f"({_md(row.get('fabric_source_grade') or 'ungraded')} evidence, dated "
                f"{_md(_date(row.get('fabric_source_date')) or 'unknown')}, read by us "
                f"{_md(_date(row['fabric_observed_at']))})"
                if not pd.isna(row["fabric_class"])
                else "not stated by any source"
            )
        )
    lines += ["", f"Snapshot {shortlist.snapshot_id}; notes per offer are in the CSV and XLSX.", ""]
    return "\n".join(lines)


def _acceptance_lines(shortlist: Shortlist) -> list[str]:
    """Per shortlisted offer: what the provider must demonstrate before acceptance, the
    threshold for that offer, and pass or fail where the buyer measured it; then the
    contract terms that cost money, with each provider's reply where it gave one."""
    items = acceptance.checklist()
    moe = _moe(shortlist.result.request.workload)
    replies = {(r["provider"], r["question_id"]): r for r in shortlist.result.replies}
    lines = [
        "## Before you accept the cluster",
        "",
        "What each provider should demonstrate on the delivered cluster before you accept it "
        f"(acceptance.json, version {items.version}; each test cites where the practice comes "
        "from). Send the nccl-tests output to `fabricscope calibrate`: the all-reduce is then "
        "passed or failed here against the threshold for the offer's stated fabric.",
        "",
    ]
    for _, row in shortlist.rows.iterrows():
        provider = str(row["provider"])
        lines += [
            f"### {_md(provider)} `{_md(row['instance_type'])}` ({row['nodes']} nodes)",
            "",
            "| test | pass when | status |",
            "|---|---|---|",
        ]
        for verdict in acceptance.verdicts(row, shortlist.result.calibrations, moe):
            reply = replies.get((provider, verdict.test.id))
            said = (
                f"; the provider answered {reply['value']} on {_date(reply['answered_on'])}"
                if reply
                else ""
            )
            lines.append(
                f"| {_md(verdict.test.demonstrate)} ({_md(verdict.test.how)}) | "
                f"{_md(verdict.threshold)} | **{verdict.status}**: {_md(verdict.detail)}{said} |"
            )
        lines.append("")
    lines += [
        "## Contract terms that cost money",
        "",
        "Ask each provider; they are rows of the answers template too.",
        "",
    ]
    for term in items.terms:
        lines.append(f"- **{_md(term.question)}** {_md(term.why)} (Source: {_md(term.source)}.)")
        for provider in shortlist.open_questions:
            reply = replies.get((provider, term.id))
            if reply:
                lines.append(
                    f"  - {_md(ranking.provider_name(provider))} answered on "
                    f"{_date(reply['answered_on'])} ({_md(reply['answered_by'])}): "
                    f'"{_md(reply["answer"])}"'
                )
    return [*lines, ""]


def _replies(shortlist: Shortlist, provider: str) -> list[str]:
    """What the provider answered in reply to the questionnaire: which question, what, who
    and when."""
    texts = {q.id: q.text for q in transparency.load_questionnaire().questions}
    replied = [
        a
        for a in shortlist.answers
        if a.provider == provider and transparency.replied_by_provider(a)
    ]
    if not replied:
        return []
    lines = [f"Answered by {ranking.provider_name(provider)} in reply:", ""]
    for answer in replied:
        given = answer.evidence[0]
        lines.append(
            f"- {_md(texts.get(answer.question_id, answer.question_id))} **{answer.value.value}**"
            f' ({_md(answer.reason.split(" in reply")[0])}): "{_md(given.quote)}" '
            f"({_md(given.source_url)})"
        )
    still = ["Still open:", ""] if shortlist.open_questions.get(provider) else []
    return [*lines, "", *still]


def _who_quotes(rows: pd.DataFrame) -> list[str]:
    """Lines saying, for a provider's shortlisted offers, who published the price and so who
    to ask for a quote: a reseller's price is not one the provider published; a copy in a
    third party's catalog is not the seller's own list."""
    lines = []
    for _, row in rows.iterrows():
        offer = f"{_md(row['offer_label'])} (`{_md(row['instance_type'])}`)"
        seller = ranking.provider_name(row["sold_by"])
        provider = ranking.provider_name(row["provider"])
        if row["price_obtained_by"] == "quote":
            until = _date(row.get("quote_valid_until"))
            lines.append(
                f"- The price of {offer} is your quote {_md(row['quote_id'])} from {seller}"
                + (f", valid until {until}" if until else ", with no end date stated")
                + ": confirm its terms (term, minimum commitment, delivery date) in writing."
            )
        elif row["sold_by"] != row["provider"]:
            lines.append(
                f"- {offer}: {_md(row['sold_and_run_by'])}. The price is the reseller's "
                f"({_md(row['price_published_by'])}), not one {provider} published: ask {seller} "
                f"for the quote; the questions below are about {provider}'s machines and fabric."
            )
        elif row["price_obtained_by"] == "catalog":
            lines.append(
                f"- The price of {offer} was read from a third party's copy "
                f"({_md(row['price_published_by'])}): ask {seller} to confirm it."
            )
    return [*lines, ""] if lines else []


def _date(value: Any) -> str | None:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return pd.Timestamp(value).strftime("%Y-%m-%d")
