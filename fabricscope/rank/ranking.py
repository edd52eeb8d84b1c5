"""Rank current offers for one workload: time-to-train, cost and why, per offer and provider.

Every current offer (the warehouse's ``instance_catalog``) that can host the job is estimated
with the scaling model on that offer's fabric; offers that cannot host it, do not fit memory
or break a constraint are kept in ``excluded`` with the reason. Nothing is dropped silently.

Honesty rules (docs/RANKING.md):

- A fabric nobody has stated is not guessed: a multi-node job on such an offer is estimated
  twice, on the pessimistic class (plain Ethernet/TCP) and on the optimistic one (InfiniBand),
  and the row shows the range. A class stated without its bandwidth gets the bandwidth range
  ``UNKNOWN_GBPS_PER_GPU`` (a stated plain-Ethernet network ``STATED_TCP_GBPS_PER_NODE``).
  Rows are ordered by the pessimistic end: what a buyer can count on.
- Whole nodes are rented: a per-GPU price for an HGX (SXM) listing is a slice of an 8-GPU
  node, so a job pays for ``ceil(N / 8) * 8`` GPUs there; each such reading is in ``notes``.
- The model runs once per distinct hardware profile (GPU, count, node size, fabric,
  bandwidth, calibration), not once per offer; offers join their profile's results.
- A training row carries the model's error held out for its kind of job (GPU generation,
  precision, dense or MoE, stack: fabricscope/model/error_bands.py), the cell it comes from
  and the time and GPU time's cost at its ends (``BAND_COLUMNS``): how far to trust the
  estimate. A served row carries the serving model's (GPU generation, dense or MoE, weight
  precision), with its tokens/s per GPU and USD per million output tokens at the band's ends.
"""

from __future__ import annotations

import csv
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fabricscope import frames
from fabricscope.evidence import transparency
from fabricscope.evidence.calibrate import ALL_REDUCE_SQL, all_reduce_by_provider
from fabricscope.model import error_bands
from fabricscope.model.serving import ServingWorkload
from fabricscope.model.workload import Workload
from fabricscope.rank import catalog
from fabricscope.rank.costs import CostInputs, whole_cost
from fabricscope.rank.estimators import TRAINING, Estimator, estimator_for
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import SnapshotInfo, read_frames
from fabricscope.warehouse.gpus import REFERENCE_DIR
from fabricscope.warehouse.models import PricingTier

# How good a fabric is for multi-node training, for "at least this class" constraints.
# Unknown is below everything: it never satisfies a minimum.
FABRIC_ORDER: dict[str, int] = {
    "none": 0,
    "ethernet": 1,
    "tcpx": 2,
    "efa": 3,
    "roce": 3,
    "spectrum_x": 4,
    "ultra_ethernet": 4,
    "infiniband": 4,
}
# An unstated fabric is estimated at both ends of what the field offers.
UNKNOWN_FABRIC_RANGE: tuple[str, str] = ("ethernet", "infiniband")
# A stated class without its bandwidth (Gb/s per GPU): one 400G NIC shared by an 8-GPU node
# up to one 400G NIC per GPU (HGX H100/H200 reference design). Prior.
UNKNOWN_GBPS_PER_GPU: tuple[float, float] = (50.0, 400.0)
# An unstated fabric's worse end is TCP over the node's front-end NIC, shared by its GPUs:
# Google documents 32 Gb/s for its slowest GPU instances ("For N1 general-purpose instances
# that have P100 and P4 GPUs attached, a maximum network bandwidth of 32 Gbps is available",
# https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth). Its better end is one
# 400G NIC per GPU, as above.
UNKNOWN_GBPS_PER_NODE_WORST = 32.0
# A stated plain-Ethernet (TCP) network without its bandwidth: from the same 32 Gb/s per node
# up to the most a provider documents between instances over TCP/IP: Lambda's "The bandwidth
# between instances in our Utah, USA region (us-west-3) can be up to 200 Gbps"
# (https://github.com/LambdaLabs/docsy-lambda-docs/blob/d8b13853b3224fe2b0f2f44df2adf44aa0adee94/content/en/cloud/network-bandwidth.md),
# not the 400 Gb/s per GPU of an RDMA back-end network.
STATED_TCP_GBPS_PER_NODE: tuple[float, float] = (UNKNOWN_GBPS_PER_NODE_WORST, 200.0)
# What a fabric class really carries per node (Gb/s), for the "what if this offer had fabric X"
# view when the offer does not state that class's bandwidth; 8-GPU nodes as their providers
# document them:
# - ethernet: "For A2 and G2 accelerator-optimized instances, you can get a maximum network
#   bandwidth of up to 100 Gbps" (TCP on front-end NICs), and tcpx: A3 High (GPUDirect-TCPX)
#   "1,000 Gbps" max total bandwidth, both https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth;
# - roce: Google A3 Ultra / A4 "The eight CX7 NICs deliver a total network bandwidth of
#   3,200 Gbps" (the same page);
# - infiniband: Azure ND H100 v5 "3.2Tb/s of interconnect bandwidth per VM" (MicrosoftDocs
#   azure-docs, nd-h100-v5-series-summary.md, as in fabricscope/scrapers/curated/fabric_facts.csv);
# - efa: AWS p5.48xlarge, instance-network-bandwidth 3200 (aws/karpenter-provider-aws's
#   instance-type reference, the same CSV);
# - spectrum_x, ultra_ethernet: prior, the same eight 400G NICs (no class-wide figure found).
WHAT_IF_GBPS_PER_NODE: dict[str, float] = {
    "ethernet": 100.0,
    "tcpx": 1000.0,
    "roce": 3200.0,
    "infiniband": 3200.0,
    "efa": 3200.0,
    "spectrum_x": 3200.0,
    "ultra_ethernet": 3200.0,
}
# An HGX baseboard carries 8 SXM GPUs: a per-GPU price for an SXM listing is a slice of one.
HGX_GPUS_PER_NODE = 8
# Multi-node clusters are sold in whole nodes: an instance with fewer GPUs than this is a
# slice of a node and hosts multi-node jobs only where a fact for that very instance type
# says it does (a product-line fact does not reach its 1-GPU VMs).
FULL_NODE_GPUS = 8

Objective = Literal["cost", "time", "blend"]


class RankingError(ValueError):
    """A request that cannot be ranked; the message says what to change."""


class RankRequest(BaseModel):
    """What to rank: one workload (to train or to serve), GPU counts to consider, tiers and
    constraints."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: Workload | ServingWorkload
    gpu_counts: tuple[int, ...] = Field(min_length=1)
    tiers: tuple[PricingTier, ...] = (PricingTier.ON_DEMAND,)
    gpu_models: tuple[str, ...] | None = None
    regions: tuple[str, ...] | None = None
    max_budget_usd: float | None = Field(default=None, gt=0)
    deadline_hours: float | None = Field(default=None, gt=0)
    min_fabric_class: str | None = None
    multi_node_required: bool = False
    objective: Objective = "cost"
    time_weight: float = Field(default=0.5, ge=0, le=1, description="blend: weight of time")
    fabric_override: str | None = Field(
        default=None, description="what if every offer had this fabric class"
    )
    max_price_age_days: float | None = Field(
        default=None, gt=0, le=36500, description="leave out prices observed longer ago"
    )
    costs: CostInputs = Field(
        default_factory=CostInputs,
        description="the job's storage, downloads and support, for its whole cost",
    )

    @field_validator("gpu_counts")
    @classmethod
    def _counts(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(n < 1 or n > 1_000_000 for n in value):
            raise ValueError("GPU counts must be between 1 and 1,000,000")
        return tuple(sorted(set(value)))

    @field_validator("gpu_models")
    @classmethod
    def _models(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        return tuple(catalog.resolve_gpu(name) for name in value)

    @field_validator("min_fabric_class", "fabric_override")
    @classmethod
    def _fabric(cls, value: str | None) -> str | None:
        if value is not None and value not in FABRIC_ORDER:
            raise ValueError(
                f"unknown fabric class {value!r}; one of {', '.join(sorted(FABRIC_ORDER))}"
            )
        return value

    @model_validator(mode="after")
    def _override_is_a_network(self) -> RankRequest:
        if self.fabric_override == "none":
            raise ValueError("fabric_override 'none' cannot carry a multi-node job")
        if self.workload.kind == "serving" and self.deadline_hours is not None:
            raise ValueError("a serving workload has no deadline: give latency targets instead")
        return self


def parse_gpu_counts(text: str) -> tuple[int, ...]:
    """'64', '8,16,64' or a range '64-512' (its powers of two and both ends)."""
    text = text.strip()
    try:
        if re.fullmatch(r"\d+\s*-\s*\d+", text):
            low, high = (int(part) for part in text.split("-"))
            if low < 1 or high < low:
                raise ValueError
            counts = {low, high}
            power = 1
            while power <= high:
                if power >= low:
                    counts.add(power)
                power *= 2
            return tuple(sorted(counts))
        counts = tuple(int(part) for part in text.split(","))
        if not counts or min(counts) < 1:
            raise ValueError
        return counts
    except ValueError:
        raise RankingError(
            f"--gpus {text!r}: give a count (64), a list (8,16,64) or a range (64-512)"
        ) from None


@dataclass(frozen=True)
class RankResult:
    """Ranked offers (one row per offer, best GPU count), exclusions and providers."""

    snapshot: SnapshotInfo | None
    request: RankRequest
    offers: pd.DataFrame
    excluded: pd.DataFrame
    providers: pd.DataFrame
    # what the ranking read, from the same snapshot: the catalog rows, the calibrations and
    # the transparency answers (empty when ranked from a frame alone)
    catalog: pd.DataFrame = field(default_factory=pd.DataFrame)
    # offers shown as another row because they are the same offer in another region:
    # offer_key -> the offer_key of the row that lists their region
    merged: Mapping[str, str] = field(default_factory=dict)
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    answers: tuple[transparency.Answer, ...] = ()
    # the providers' current replies to the RFI (rfi_answers_current rows: the questionnaire's
    # questions, the acceptance tests and the contract terms)
    replies: tuple[Mapping[str, Any], ...] = ()
    # how the model was run: distinct hardware profiles estimated, and the seconds it took
    profiles_estimated: int = 0
    model_seconds: float = 0.0
    # the time prices' ages (data_age_days) are measured at
    as_of: datetime | None = None
    # when the rows were ranked and stored, for a ranking served from the warehouse
    # (fabricscope/rank/materialised.py); None when ranked now
    stored_at: datetime | None = None

    @property
    def estimator(self) -> Estimator:
        """The model the offers were estimated with (the workload's kind's)."""
        return estimator_for(self.request.workload)

    @property
    def columns(self) -> list[str]:
        """A ranked row's columns, in order (the estimator's, a training row's error band
        after its cost)."""
        return ranked_columns(self.estimator)

    def offer_records(self) -> list[dict[str, Any]]:
        return records(self.offers)

    def what_if(self, fabric_class: str) -> RankResult:
        """The same ranking with every offer's fabric set to ``fabric_class``."""
        request = self.request.model_copy(update={"fabric_override": fabric_class})
        RankRequest.model_validate(request.model_dump())  # the same checks as any request
        scores = {p: s.score for p, s in transparency.scores(self.answers).items()}
        return replace(
            rank_offers(
                self.catalog, request, self.snapshot, self.calibrations, self.as_of, scores
            ),
            answers=self.answers,
            replies=self.replies,
        )


# a ranked training row's error band (TrainingEstimator.annotations)
BAND_COLUMNS = TRAINING.annotations


def ranked_columns(estimator: Estimator) -> list[str]:
    """A ranked row's columns: the estimator's, and its annotations (a training row's error
    band) after its cost."""
    columns = list(estimator.columns)
    after = columns.index("cost_usd_low") + 1
    return [*columns[:after], *estimator.annotations, *columns[after:]]


# the columns of a ranked training row (a ranking's own: ``RankResult.columns``)
RANKED_COLUMNS = ranked_columns(TRAINING)
EXCLUDED_COLUMNS = [
    "provider",
    "sold_by",
    "offer_label",
    "gpu_model",
    "gpus",
    "reason",
    "instance_type",
    "region",
    "pricing_tier",
    "price_usd_per_gpu_hour",
    "price_source_url",
    "offer_key",
]
OFFERS_SQL = reads.sql("rank_offers")


@dataclass(frozen=True)
class RankInputs:
    """What a ranking reads, all from one snapshot: read once, rank many requests (the
    app caches it by snapshot id; the materialised estimates rank every preset from it)."""

    snapshot: SnapshotInfo
    catalog: pd.DataFrame
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]]
    answers: tuple[transparency.Answer, ...]
    replies: tuple[Mapping[str, Any], ...] = ()

    @property
    def transparency_scores(self) -> dict[str, float]:
        return {p: s.score for p, s in transparency.scores(self.answers).items()}


def read_inputs(warehouse: Path) -> RankInputs:
    """One read-only connection: the catalog, calibrations and transparency facts."""
    queries = {
        "offers": OFFERS_SQL,
        "calibrations": ALL_REDUCE_SQL,
        **{f"t_{k}": v for k, v in transparency.QUERIES.items()},
    }
    snapshot, frames = read_frames(warehouse, queries)
    facts = transparency.TransparencyInputs(
        frames["t_facts"],
        frames["t_offers"],
        frames["t_providers"],
        snapshot.snapshot_id,
        frames["t_rfi"],
    )
    return RankInputs(
        snapshot,
        with_offer_identity(frames["offers"]),
        all_reduce_by_provider(frames["calibrations"]),
        tuple(transparency.answers(facts)),
        tuple(frames["t_rfi"].to_dict("records")),
    )


def rank(
    warehouse: Path | RankInputs,
    request: RankRequest,
    now: datetime | None = None,
) -> RankResult:
    """Rank the published snapshot's current offers (one read, hence one snapshot).

    ``now``: the time prices' ages are measured at (default: the clock when ranking)."""
    inputs = warehouse if isinstance(warehouse, RankInputs) else read_inputs(warehouse)
    result = rank_offers(
        inputs.catalog,
        request,
        inputs.snapshot,
        inputs.calibrations,
        now=now,
        transparency_scores=inputs.transparency_scores,
    )
    return replace(result, answers=inputs.answers, replies=inputs.replies)


def rank_offers(
    offers: pd.DataFrame,
    request: RankRequest,
    snapshot: SnapshotInfo | None = None,
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
    now: datetime | None = None,
    transparency_scores: Mapping[str, float] | None = None,
    estimator: Estimator | None = None,
    every_count: bool = False,
) -> RankResult:
    """Rank ``offers`` (rows shaped like ``instance_catalog``) for ``request``.

    ``transparency_scores``: each provider's questionnaire score
    (fabricscope/evidence/transparency.py), shown beside its rows; a provider without one shows
    NULL. ``estimator``: the model of the workload's kind (fabricscope/rank/estimators.py;
    by default the one ``estimator_for`` finds). ``every_count``: keep a row for every GPU
    count an offer can run (for curves, fabricscope/rank/curves.py), not only its best.
    """
    now = now or datetime.now(UTC)
    estimator = estimator or estimator_for(request.workload)
    columns = ranked_columns(estimator)
    specs = catalog.gpu_specs()
    snapshot_id = snapshot.snapshot_id if snapshot else None
    candidates: list[dict[str, Any]] = []
    # offer-level exclusions in bulk (columns, not rows): most offers stop here
    offers = offers.reset_index(drop=True)
    if "offer_label" not in offers.columns:  # read_inputs adds them once per snapshot
        offers = with_offer_identity(offers)
    keys = frame_offer_keys(offers)
    reasons = _offer_reasons(offers, request, specs, now)
    out = reasons.notna()
    bulk = offers.loc[out, [c for c in EXCLUDED_COLUMNS if c in offers.columns]].copy()
    bulk["offer_key"], bulk["reason"], bulk["gpus"] = keys[out], reasons[out], None
    excluded: list[dict[str, Any]] = []
    kept, merged = _one_row_per_offer(offers.loc[~out], keys[~out])
    for offer, key in zip(frames.records(kept), keys[kept.index], strict=True):
        base = {
            "provider": offer["provider"],
            "sold_by": offer["sold_by"],
            "offer_label": offer["offer_label"],
            "instance_type": offer["instance_type"],
            "region": offer.get("region"),
            "pricing_tier": offer["pricing_tier"],
            "gpu_model": offer.get("gpu_model"),
            "price_usd_per_gpu_hour": offer.get("price_usd_per_gpu_hour"),
            "price_source_url": offer.get("price_source_url"),
            "offer_key": key,
        }
        per_node, node_note = _node_size(offer)
        for gpus in request.gpu_counts:
            plan = _plan(offer, request, gpus, per_node)
            if isinstance(plan, str):
                excluded.append({**base, "gpus": gpus, "reason": plan})
                continue
            notes = [n for n in (node_note, *plan["notes"]) if n]
            candidates.append(
                {**offer, **plan, "gpus": gpus, "gpus_per_node": per_node, "notes": notes}
            )

    started = time.perf_counter()
    rows, profiles_estimated = _estimate(candidates, request, calibrations, estimator)
    model_seconds = time.perf_counter() - started
    ranked: list[dict[str, Any]] = []
    for row in rows:
        reason = _result_reason(row, request, estimator)
        if reason:
            excluded.append(
                {
                    **{c: row.get(c) for c in EXCLUDED_COLUMNS if c != "reason"},
                    "reason": reason,
                }
            )
        else:
            ranked.append(row)

    frame = pd.DataFrame(_note_limits(ranked, request, estimator))
    if frame.empty:
        frame = pd.DataFrame(columns=columns)
    else:
        # one score orders the GPU counts of an offer and the offers: each keeps its best
        frame["score"] = _scores(frame, request, estimator)
        frame = frame.sort_values(
            ["score", estimator.time, "provider", "offer_key"], kind="mergesort"
        )
        if not every_count:
            frame = frame.drop_duplicates("offer_key")
        frame = frame.reset_index(drop=True)
        frame["rank"] = np.arange(1, len(frame) + 1)
        frame["pareto"] = _pareto(frame[estimator.time], frame["total_cost_usd"])
        frame["data_age_days"] = [
            _age_days(now, observed) for observed in frame["price_observed_at"]
        ]
        frame["snapshot_id"] = snapshot_id
        scores = transparency_scores or {}
        frame["transparency_score"] = [scores.get(p) for p in frame["provider"]]
        frame["notes"] = ["; ".join(notes) or None for notes in frame["notes"]]
        frame = estimator.annotate(frame, request.workload)
        frame = frame.reindex(columns=columns)  # absent input columns stay NULL
        frame = as_stored_types(frame)
    excluded_frame = pd.concat(
        [bulk.reindex(columns=EXCLUDED_COLUMNS), pd.DataFrame(excluded, columns=EXCLUDED_COLUMNS)],
        ignore_index=True,
    )
    excluded_frame["gpus"] = excluded_frame["gpus"].astype("Int64")
    return RankResult(
        snapshot,
        request,
        frame,
        excluded_frame,
        _providers(frame, estimator),
        catalog=offers,
        merged=merged,
        calibrations=dict(calibrations or {}),
        profiles_estimated=profiles_estimated,
        model_seconds=model_seconds,
        as_of=now,
    )


# ranked columns that may be unknown (None) in every row, typed as they read back from the
# warehouse: days as datetime64 (NaT where unknown), amounts as floats (NaN where unknown)
DATE_COLUMNS = ("quote_valid_until",)
FLOAT_COLUMNS = ("commitment_usd", "storage_usd", "egress_usd", "support_usd")


def as_stored_types(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its DATE_COLUMNS and FLOAT_COLUMNS typed alike however they were read:
    from a ranking (dates, numbers or None) or from the stored estimates."""
    for name in DATE_COLUMNS:
        if name in frame.columns:
            frame[name] = pd.to_datetime(frame[name]).astype("datetime64[us]")
    for name in FLOAT_COLUMNS:
        if name in frame.columns:
            frame[name] = pd.to_numeric(frame[name], errors="coerce").astype(float)
    return frame


def offer_key(offer: Mapping[str, Any]) -> str:
    """A stable key for an offer within a snapshot (provider/type/region/tier, and the
    quote's id for a quote: two quotes for one configuration are two offers)."""
    parts = ("provider", "instance_type", "region", "pricing_tier")
    values = (offer.get(part) for part in parts)
    key = "/".join("-" if _missing(v) or v == "" else str(v) for v in values)
    quote = offer.get("quote_id")
    return key if _missing(quote) or not quote else f"{key}/{quote}"


# ---- what an offer is and who sells it, in a buyer's words

# Broker catalogs: each row names the cloud it runs on (its ``provider``, from the spider's
# ``broker_providers``), and the price is the broker's, who takes the payment. Every other
# source sells what it lists itself: its rows' ``provider`` is the seller.
RESELLER_SOURCES: dict[str, str] = {
    "skypilot_primeintellect": "prime_intellect",
    "skypilot_shadeform": "shadeform",
}
# Third parties whose catalogs copy a seller's prices (obtained_by 'catalog'): a mirror, third-
# party evidence of a price the seller published (docs/TRANSPARENCY.md grades).
CATALOG_PUBLISHERS: dict[str, str] = {"skypilot_": "SkyPilot's catalog"}
# How each way of obtaining a price reads (fabricscope.warehouse.models' obtained_by)
_OWN_PRICE_WORDS: dict[str, str] = {
    "api": "{seller}, through its own price API",
    "scraped": "{seller}, on its own pricing page",
    "curated": "{seller}, typed in by hand from a page it published",
    "quote": "{seller}, in a quote to you",
}
# fabric classes as their makers spell them
FABRIC_NAMES: dict[str, str] = {
    "infiniband": "InfiniBand",
    "spectrum_x": "Spectrum-X",
    "ultra_ethernet": "Ultra Ethernet",
    "roce": "RoCE",
    "efa": "EFA",
    "tcpx": "GPUDirect-TCPX",
    "ethernet": "Ethernet (TCP)",
}


@cache
def _provider_reference() -> dict[str, tuple[str, str | None]]:
    """provider -> (display name, kind), from fabricscope/warehouse/reference/providers.csv."""
    with (REFERENCE_DIR / "providers.csv").open(newline="", encoding="utf-8") as handle:
        return {
            row["provider"]: (row["display_name"] or row["provider"], row["kind"] or None)
            for row in csv.DictReader(handle)
        }


def provider_name(provider: str | None) -> str:
    """A provider's display name (providers.csv), or its id when it has none."""
    if _missing(provider) or not provider:
        return "not stated"
    return _provider_reference().get(provider, (provider, None))[0]


def gpu_name(gpu_model: str | None) -> str | None:
    """A canonical GPU id as people write it: 'H100-SXM-80GB' -> 'H100 SXM 80GB'."""
    if _missing(gpu_model) or not gpu_model:
        return None
    return " ".join("PCIe" if part == "PCIE" else part for part in str(gpu_model).split("-"))


def _gbps(value: Any) -> str | None:
    return None if _missing(value) or not value else f"{float(value):,g} Gb/s"


def offer_label(offer: Mapping[str, Any]) -> str:
    """What the offer is, from its stated fields only: '8x H100 SXM 80GB, 3,200 Gb/s
    InfiniBand'. An unknown part is said to be unknown, never guessed from the offer's name."""
    gpu = gpu_name(offer.get("gpu_model"))
    if gpu is None:
        published = offer.get("gpu_name")
        gpu = "GPU not stated" if _missing(published) else f"{published} (GPU not identified)"
    count = offer.get("gpu_count")
    if offer.get("price_basis") in ("per_gpu", "gpu_only_host_extra") and count == 1:
        what = f"{gpu}, priced per GPU"  # a slice of a node whose size the listing does not say
    else:
        what = gpu if _missing(count) or not count else f"{int(count)}x {gpu}"
    fabric = offer.get("fabric_class")
    per_node, per_gpu = (
        _gbps(offer.get("fabric_gbps_per_node")),
        _gbps(offer.get("fabric_gbps_per_gpu")),
    )
    bandwidth = per_node or (per_gpu and f"{per_gpu} per GPU")
    if fabric == "none":
        link = "no cluster fabric"
    elif not _missing(fabric) and fabric:
        name = FABRIC_NAMES.get(str(fabric), str(fabric))
        link = f"{bandwidth} {name}" if bandwidth else f"{name}, bandwidth not stated"
    else:
        link = f"{bandwidth}, fabric class not stated" if bandwidth else "fabric not stated"
    return f"{what}, {link}"


def seller(offer: Mapping[str, Any]) -> tuple[str, str, str | None]:
    """(sold_by, 'sold by X, runs on Y', who published the price) of one offer.

    ``sold_by`` is who publishes the price and takes the payment: the broker for a broker's
    catalog row (RESELLER_SOURCES), else the offer's provider. The provider stays the cloud the
    offer runs on; a marketplace's or broker's own listing names no cloud behind it, and says so.
    """
    provider = offer.get("provider")
    source = "" if _missing(offer.get("source")) else str(offer.get("source"))
    sold_by = RESELLER_SOURCES.get(source, provider)
    quoted_by = offer.get("quote_sold_by")
    if offer.get("price_obtained_by") == "quote" and not _missing(quoted_by) and quoted_by:
        sold_by = quoted_by  # a reseller's quote
    name, kind = provider_name(sold_by), _provider_reference().get(sold_by or "", ("", None))[1]
    if sold_by != provider:
        sold = f"sold by {name}, runs on {provider_name(provider)}"
    elif kind == "marketplace":
        sold = f"sold by {name}, a marketplace: runs on a host it lists, not a named cloud"
    elif kind == "broker":
        sold = f"sold by {name}, a broker: the cloud it runs on is not stated"
    else:
        sold = f"sold by {name}"
    obtained = offer.get("price_obtained_by")
    if obtained == "catalog":
        publisher = next(
            (who for prefix, who in CATALOG_PUBLISHERS.items() if source.startswith(prefix)),
            f"a third party's catalog (source {source or 'not stated'})",
        )
        published = f"{name}, copied by {publisher}, a third-party mirror of its list"
    elif obtained == "quote":
        published = _OWN_PRICE_WORDS["quote"].format(seller=name) + (
            f" ({offer.get('quote_id')}: {offer.get('quote_source')})"
        )
    elif obtained in _OWN_PRICE_WORDS:
        published = _OWN_PRICE_WORDS[str(obtained)].format(seller=name)
    else:
        published = None
    return str(sold_by), sold, published


def with_offer_identity(offers: pd.DataFrame) -> pd.DataFrame:
    """``offers`` with ``offer_label``, ``sold_by``, ``sold_and_run_by`` and
    ``price_published_by`` (see ``offer_label`` and ``seller``)."""
    rows = frames.records(offers[[c for c in _IDENTITY_FIELDS if c in offers.columns]])
    sold = [seller(row) for row in rows]
    return offers.assign(
        offer_label=[offer_label(row) for row in rows],
        sold_by=[s[0] for s in sold],
        sold_and_run_by=[s[1] for s in sold],
        price_published_by=[s[2] for s in sold],
    )


# the stated fields an offer's label and seller are built from
_IDENTITY_FIELDS = (
    "provider",
    "source",
    "gpu_model",
    "gpu_name",
    "gpu_count",
    "price_basis",
    "fabric_class",
    "fabric_gbps_per_node",
    "fabric_gbps_per_gpu",
    "price_obtained_by",
    "quote_id",
    "quote_sold_by",
    "quote_source",
)


# ---- per offer


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NaT


def frame_offer_keys(offers: pd.DataFrame) -> pd.Series:
    """offer_key for every row, built from columns (the same as ``offer_key`` row by row)."""
    parts = [
        offers[name].astype(object).where(offers[name].notna(), "-").astype(str)
        if name in offers.columns
        else pd.Series("-", index=offers.index)
        for name in ("provider", "instance_type", "region", "pricing_tier")
    ]
    keys = parts[0].str.cat(parts[1:], sep="/").replace("", "-")
    if "quote_id" in offers.columns:  # as offer_key: a quote's id ends its key
        quoted = offers["quote_id"].notna() & (offers["quote_id"].astype(object) != "")
        keys[quoted] = keys[quoted] + "/" + offers.loc[quoted, "quote_id"].astype(str)
    return keys


def _column(offers: pd.DataFrame, name: str) -> pd.Series:
    if name in offers.columns:
        return offers[name].astype(object).where(offers[name].notna(), None)
    return pd.Series([None] * len(offers), index=offers.index, dtype=object)


def _offer_reasons(
    offers: pd.DataFrame, request: RankRequest, specs: Mapping[str, Any], now: datetime
) -> pd.Series:
    """Why each offer cannot be ranked for ``request`` at all (None: it may be), in order:
    tier, an expired quote, GPU, requested GPUs and regions, price and its age, minimum
    fabric, multi-node required."""
    tier, model = _column(offers, "pricing_tier"), _column(offers, "gpu_model")
    name, region = _column(offers, "gpu_name"), _column(offers, "region")
    price, fabric = _column(offers, "price_usd_per_gpu_hour"), _column(offers, "fabric_class")
    multi = _column(offers, "multi_node")
    reasons = pd.Series([None] * len(offers), index=offers.index, dtype=object)

    def give(mask: pd.Series, text: pd.Series | str) -> None:
        fill = mask & reasons.isna()
        reasons[fill] = text[fill] if isinstance(text, pd.Series) else text

    tiers = {t.value for t in request.tiers}
    give(~tier.isin(tiers), "pricing tier " + tier.astype(str) + " not requested")
    if "quote_valid_until" in offers.columns:
        until = pd.to_datetime(offers["quote_valid_until"], errors="coerce")
        expired = until.notna() & (until < pd.Timestamp(pd.Timestamp(now).date()))
        give(
            expired,
            "quote "
            + _column(offers, "quote_id").astype(str)
            + " expired on "
            + until.dt.strftime("%Y-%m-%d").fillna("")
            + ": ask the provider for a new one",
        )
    give(
        model.isna(),
        "GPU not identified: the listing calls it "
        + name.map(repr)
        + ", not enough to tell which GPU (model, form factor, memory), so its speed is unknown",
    )
    give(
        model.notna() & ~model.isin(list(specs)),
        "GPU "
        + model.map(gpu_name).astype(str)
        + ": nothing can be estimated on it, as we hold no sourced figure for its compute, "
        "memory or GPU-to-GPU bandwidth",
    )
    if request.gpu_models is not None:
        give(
            ~model.isin(list(request.gpu_models)),
            "GPU " + model.astype(str) + " not among the requested models",
        )
    if request.regions is not None:
        give(
            ~region.isin(list(request.regions)),
            "region "
            + region.fillna("not stated").astype(str)
            + " not among the requested regions",
        )
    give(
        price.isna() | (price.fillna(0) == 0),
        "no price per GPU-hour in US dollars (none stated, or in a currency without a rate), "
        "so its cost cannot be computed",
    )
    if request.max_price_age_days is not None and "price_observed_at" in offers.columns:
        observed = pd.to_datetime(offers["price_observed_at"], utc=True, errors="coerce")
        age = (pd.Timestamp(now) - observed).dt.total_seconds() / 86400.0
        give(
            age.isna() | (age > request.max_price_age_days),
            "price observed "
            + age.round(0).map(
                lambda d: "at an unknown date" if pd.isna(d) else f"{d:.0f} days ago"
            )
            + f", older than the {request.max_price_age_days:g}-day limit",
        )
    if request.min_fabric_class:
        floor = FABRIC_ORDER[request.min_fabric_class]
        rank_of = fabric.map(lambda f: FABRIC_ORDER.get(f, -1) if f is not None else -1)
        stated = ("fabric " + fabric.astype(str) + " is below").where(
            fabric.notna(), "no source states its fabric, so it cannot be shown to meet"
        )
        give(rank_of < floor, stated + f" the minimum {request.min_fabric_class}")
    if request.multi_node_required:
        stated = multi.map(lambda m: "not stated" if m is None else "single-node only")
        give(
            multi.map(lambda m: m is not True),
            "multi-node required; the offer's multi-node support is " + stated,
        )
    return reasons


# What makes two rows of one provider the same offer in different regions: everything the
# ranking reads but the region (Lambda's catalog repeats each type in 17 regions at one price).
_SAME_OFFER = (
    "quote_id",
    "provider",
    "sold_by",
    "instance_type",
    "pricing_tier",
    "price_basis",
    "price_usd_per_gpu_hour",
    "gpu_model",
    "gpu_count",
    "gpu_form_factor",
    "fabric_class",
    "fabric_gbps_per_gpu",
    "fabric_gbps_per_node",
    "multi_node",
    "max_cluster_gpus",
)


def _one_row_per_offer(
    offers: pd.DataFrame, keys: pd.Series
) -> tuple[pd.DataFrame, dict[str, str]]:
    """One row per offer sold in several regions at one price: the first region's row, with
    ``regions`` (all of them, sorted) and ``region_count``; and which keys it stands for."""
    if offers.empty:
        return offers.assign(regions=None, region_count=None), {}
    columns = [c for c in _SAME_OFFER if c in offers.columns]
    group = offers.groupby(columns, dropna=False, sort=False).ngroup()
    region = _column(offers, "region").fillna("").astype(str)
    order = pd.DataFrame({"group": group, "region": region}).sort_values("region", kind="mergesort")
    by_group = order.groupby("group", sort=False)["region"]
    first = order.groupby("group", sort=False).head(1).index
    named = {g: sorted(set(r) - {""}) for g, r in by_group}
    kept = offers.loc[sorted(first)].copy()
    kept["regions"] = [", ".join(named[g]) or None for g in group[kept.index]]
    kept["region_count"] = [len(named[g]) for g in group[kept.index]]
    leader = dict(zip(group[first], keys[first], strict=True))
    chosen = set(first)
    merged = {str(keys[i]): str(leader[group[i]]) for i in offers.index if i not in chosen}
    return kept, merged


def _node_size(offer: Mapping[str, Any]) -> tuple[int, str | None]:
    count = int(offer.get("gpu_count") or 1)
    if count > 1:
        return count, None
    sxm = offer.get("gpu_form_factor") in ("sxm", "superchip")
    if sxm and offer.get("price_basis") in ("per_gpu", "gpu_only_host_extra"):
        return HGX_GPUS_PER_NODE, (
            f"priced per GPU on an SXM (HGX) listing: read as a slice of an "
            f"{HGX_GPUS_PER_NODE}-GPU node, whole nodes rented"
        )
    return 1, None


def _plan(
    offer: Mapping[str, Any], request: RankRequest, gpus: int, per_node: int
) -> dict[str, Any] | str:
    """The fabric ends to estimate this offer at for ``gpus`` GPUs, or why it cannot host them."""
    nodes = math.ceil(gpus / per_node)
    notes: list[str] = []
    if nodes > 1 and gpus % per_node:
        return f"{gpus} GPUs is not a whole number of {per_node}-GPU nodes (try {nodes * per_node})"
    if gpus < per_node:
        notes.append(f"{gpus} of the node's {per_node} GPUs used; the whole node is paid for")
    if nodes > 1:
        if offer.get("multi_node") is False:
            why = offer.get("multi_node_reason") or "single-node only"
            return f"needs {nodes} nodes; the offer does not cluster: {why}"
        cluster = offer.get("max_cluster_gpus")
        if cluster and gpus > cluster:
            return f"needs {gpus} GPUs; the largest stated cluster is {int(cluster)}"
        stated_here = offer.get("multi_node") is True and offer.get("fabric_match") in (
            "instance_type",
            "quote",
        )
        if per_node < FULL_NODE_GPUS and not stated_here:
            return (
                f"needs {nodes} nodes; a {per_node}-GPU instance is part of a node, and no "
                "source states a multi-node fabric for this instance type"
            )
        if offer.get("multi_node") is None:
            notes.append("multi-node support not stated by any source: ask before relying on it")
    if offer.get("price_basis") == "gpu_only_host_extra":
        notes.append("price excludes the host (CPU, RAM) billed separately: cost is a floor")
    stated = offer.get("fabric_class")
    gbps = offer.get("fabric_gbps_per_gpu")
    node_gbps = offer.get("fabric_gbps_per_node")
    if nodes > 1 and not gbps and node_gbps:
        # the source states the node's total: its GPUs share it evenly (8 x 400 Gb/s NICs)
        gbps = float(node_gbps) / per_node
        notes.append(
            f"fabric bandwidth per GPU derived: {float(node_gbps):g} Gb/s per node over its "
            f"{per_node} GPUs = {gbps:g}"
        )
    if nodes == 1:
        ends = (("none", 0.0), ("none", 0.0))
        label = "none (one node)"
    elif request.fabric_override:
        what_if = request.fabric_override
        if not (gbps and stated == what_if):  # the offer's own figure is for its own class
            gbps = WHAT_IF_GBPS_PER_NODE[what_if] / per_node
        ends = ((what_if, gbps), (what_if, gbps))
        label = f"{what_if} at {gbps:g} Gb/s per GPU (what if)"
    else:
        classes = (stated, stated) if stated else UNKNOWN_FABRIC_RANGE
        if gbps:
            bandwidth = (gbps, gbps)
        elif stated == "ethernet":  # TCP on the front-end network
            bandwidth = (
                STATED_TCP_GBPS_PER_NODE[0] / per_node,
                STATED_TCP_GBPS_PER_NODE[1] / per_node,
            )
        elif stated:
            bandwidth = UNKNOWN_GBPS_PER_GPU
        else:
            bandwidth = (UNKNOWN_GBPS_PER_NODE_WORST / per_node, UNKNOWN_GBPS_PER_GPU[1])
        ends = ((classes[0], bandwidth[0]), (classes[1], bandwidth[1]))
        if stated and gbps:
            label = stated
        elif stated:
            label = f"{stated}, bandwidth unknown: {bandwidth[0]:g}-{bandwidth[1]:g} Gb/s per GPU"
        else:
            label = (
                f"unknown: {classes[0]} at {bandwidth[0]:g} to {classes[1]} at "
                f"{bandwidth[1]:g} Gb/s per GPU"
            )
    return {
        "nodes": nodes,
        "pessimistic": ends[0],
        "optimistic": ends[1],
        "fabric_estimated_as": label,
        "fabric_range": ends[0] != ends[1],
        "notes": notes,
    }


# ---- the model, once per distinct profile


def _estimate(
    candidates: Sequence[dict[str, Any]],
    request: RankRequest,
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    estimator: Estimator,
) -> tuple[list[dict[str, Any]], int]:
    """The model once per distinct profile; each candidate row with its results."""
    if not candidates:
        return [], 0
    profile_rows: list[dict[str, Any]] = []
    index: dict[tuple[Any, ...], int] = {}  # distinct profiles, calibration included
    by_offer: dict[tuple[Any, ...], int] = {}  # the same, keyed by what an offer states
    refs: list[tuple[int, int]] = []
    for row in candidates:
        pair = []
        for fabric, gbps in (row["pessimistic"], row["optimistic"]):
            # a job inside one node uses its GPUs only; cost still pays the whole node
            per_node = min(row["gpus_per_node"], row["gpus"])
            stated = (row["gpu_model"], row["gpus"], per_node, fabric, gbps, row["provider"])
            if stated not in by_offer:
                profile = {
                    "gpu_model": row["gpu_model"],
                    "gpu_count": row["gpus"],
                    "gpus_per_node": per_node,
                    "fabric_class": fabric,
                    "fabric_gbps_per_gpu": gbps or 0.0,
                    "provider": row["provider"],
                }
                resolved = catalog.with_calibrations([profile], calibrations)[0]
                key = (
                    resolved["gpu_model"],
                    resolved["gpu_count"],
                    resolved["gpus_per_node"],
                    fabric,
                    float(gbps or 0.0),
                    resolved.get("measured_busbw_gbytes_s"),
                    resolved.get("measured_nodes"),
                    resolved.get("measured_alpha_us"),
                    resolved.get("measured_ranks"),
                )
                if key not in index:
                    index[key] = len(profile_rows)
                    profile_rows.append(resolved)
                by_offer[stated] = index[key]
            pair.append(by_offer[stated])
        refs.append((pair[0], pair[1]))
    job = request.workload
    per_profile = estimator.results(job, profile_rows)
    workable = _workable_counts(job, estimator, profile_rows, per_profile)
    out = []
    for row, (low_i, high_i) in zip(candidates, refs, strict=True):
        slow, fast = per_profile[low_i], per_profile[high_i]
        worse_end = row["pessimistic"]
        if estimator.worse(fast, slow):
            slow, fast = fast, slow  # "pessimistic" is whichever end is worse (the estimator's)
            worse_end = row["optimistic"]
        rented = row["nodes"] * row["gpus_per_node"]  # whole nodes
        outputs = estimator.row(job, row, slow, fast, rented)
        if outputs["has_plan"]:  # the whole cost (rank/costs.py), from the offer's terms
            whole = whole_cost(
                {**row, **outputs}, job, request.costs, estimator.hours, estimator.hours_low
            )
            cost_notes = whole.pop("cost_notes")
            outputs |= whole
            outputs["notes"] = [*outputs["notes"], *cost_notes]
        entry = {
            **{c: row.get(c) for c in estimator.columns if c in row},
            **outputs,
            "gpu_memory_gb": row.get("gpu_memory_gb"),
            "offer_key": offer_key(row),
            "notes": [*row["notes"], *outputs["notes"]],
            # the Gb/s per GPU the worse end was costed at (the what-if's, under a what-if)
            "fabric_gbps_costed": worse_end[1] if worse_end[1] else None,
            "workable_gpus": workable.get(low_i, ()),
        }
        out.append(entry)
    return out, len(profile_rows)


# GPU counts tried, as multiples of the count that failed (whole nodes), to say which work
_NEAR_FACTORS = (0.5, 0.75, 1.25, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0)


def _workable_counts(
    job: Any,
    estimator: Estimator,
    profile_rows: Sequence[Mapping[str, Any]],
    results: Sequence[Mapping[str, Any]],
) -> dict[int, tuple[int, ...]]:
    """For each profile on which the job has no plan (no layout, or none that fits in
    memory): the nearest GPU counts, below and above, in whole nodes, on which it has one.
    One more model call over every such profile's neighbours (memory and layouts do not
    depend on the fabric, so one fabric end per GPU and node size is enough)."""
    failed = [i for i, result in enumerate(results) if not result["has_plan"]]
    tried: dict[tuple[Any, ...], int] = {}  # (gpu, node size, count) -> its row in ``rows``
    rows: list[dict[str, Any]] = []
    for i in failed:
        base = profile_rows[i]
        per_node, count = int(base["gpus_per_node"]), int(base["gpu_count"])
        nodes = math.ceil(count / per_node)
        counts = {max(1, round(nodes * f)) * per_node for f in _NEAR_FACTORS}
        counts |= {max(1, nodes + d) * per_node for d in (-2, -1, 1, 2)}
        for n in sorted(counts - {count}):
            key = (base["gpu_model"], per_node, n)
            if key not in tried:
                tried[key] = len(rows)
                row = {**base, "gpu_count": n}
                if n > per_node and base["fabric_class"] in (None, "none"):
                    # a one-node profile has no fabric; more nodes need one (any will do)
                    row |= {"fabric_class": "ethernet", "fabric_gbps_per_gpu": 100.0}
                rows.append(row)
    if not rows:
        return {}
    fits = estimator.has_plan(job, rows)
    working: dict[tuple[Any, int], list[int]] = {}  # (gpu, node size) -> counts with a plan
    for (gpu, size, n), j in tried.items():
        if fits[j]:
            working.setdefault((gpu, size), []).append(n)
    out: dict[int, tuple[int, ...]] = {}
    for i in failed:
        base = profile_rows[i]
        count = int(base["gpu_count"])
        near = working.get((base["gpu_model"], int(base["gpus_per_node"])), [])
        below = [n for n in near if n < count]
        above = [n for n in near if n > count]
        out[i] = tuple([*([max(below)] if below else []), *([min(above)] if above else [])])
    return out


def _result_reason(
    row: Mapping[str, Any], request: RankRequest, estimator: Estimator
) -> str | None:
    if not row["has_plan"]:
        return estimator.no_plan_reason(request.workload, row)
    if request.max_budget_usd and row["total_cost_usd_low"] > request.max_budget_usd:
        return (
            f"costs at least ${row['total_cost_usd_low']:,.0f} in all, over the "
            f"${request.max_budget_usd:,.0f} budget"
        )
    if request.deadline_hours and row[estimator.time_low] > request.deadline_hours:
        return (
            f"takes at least {row[estimator.time_low] / 24:,.1f} days even on the best "
            f"fabric, past the {_days_text(request.deadline_hours)}-day deadline"
        )
    return None


def _days_text(hours: float) -> str:
    """Hours as days at one decimal, as the app and the CLI ask for deadlines ('300' for a
    whole number of days)."""
    return f"{hours / 24:,.1f}".removesuffix(".0")


def _note_limits(
    rows: list[dict[str, Any]], request: RankRequest, estimator: Estimator
) -> list[dict[str, Any]]:
    """Rows kept because their optimistic end meets the budget or deadline say so when
    their pessimistic end does not."""
    for row in rows:
        if request.max_budget_usd and row["total_cost_usd"] > request.max_budget_usd:
            row["notes"].append("may exceed the budget at the pessimistic end")
        if request.deadline_hours and row[estimator.time] > request.deadline_hours:
            row["notes"].append("may miss the deadline at the pessimistic end")
    return rows


def _scores(frame: pd.DataFrame, request: RankRequest, estimator: Estimator) -> pd.Series:
    """Lower is better, at the pessimistic end. Blend: weighted time and cost, each over
    the best among every (offer, GPU count) candidate."""
    time, cost = frame[estimator.time].astype(float), frame["total_cost_usd"].astype(float)
    if request.objective == "time":
        return time / time.min()
    if request.objective == "cost":
        return cost / cost.min()
    w = request.time_weight
    return w * time / time.min() + (1 - w) * cost / cost.min()


def _pareto(time: pd.Series, cost: pd.Series) -> list[bool]:
    """True where no other offer is at least as fast and as cheap, and better in one.

    One sort instead of all pairs: an offer is on the front when its cost is the lowest
    among the offers as fast as it, and below every cost of the strictly faster ones.
    """
    t, c = time.to_numpy(dtype=float), cost.to_numpy(dtype=float)
    if not len(t):
        return []
    order = np.lexsort((c, t))
    ts, cs = t[order], c[order]
    starts = np.flatnonzero(np.r_[True, ts[1:] != ts[:-1]])
    group_min = np.minimum.reduceat(cs, starts)  # cheapest at each distinct time
    before = np.r_[np.inf, np.minimum.accumulate(group_min)[:-1]]  # cheapest strictly faster
    group = np.cumsum(np.r_[True, ts[1:] != ts[:-1]]) - 1
    front = (cs == group_min[group]) & (cs < before[group])
    out = np.empty(len(t), dtype=bool)
    out[order] = front
    return out.tolist()


def _age_days(now: datetime, observed: Any) -> float | None:
    if _missing(observed):
        return None
    stamp = pd.Timestamp(observed)
    if stamp.tzinfo is None:
        stamp = stamp.tz_localize(UTC)
    return round((pd.Timestamp(now) - stamp).total_seconds() / 86400.0, 2)


def _providers(frame: pd.DataFrame, estimator: Estimator) -> pd.DataFrame:
    """Each provider's best offer (its best rank) and how many offers qualified: what it is
    (GPU, GPUs per node, label), who sells it, and its time and cost."""
    columns = [
        "provider",
        "rank",
        "offers",
        "gpu_model",
        "gpus_per_node",
        "offer_label",
        "sold_by",
        "sold_and_run_by",
        "instance_type",
        "gpus",
        estimator.time,
        estimator.time_low,
        "cost_usd",
        "cost_usd_low",
        "total_cost_usd",
        "total_cost_usd_low",
        "costs_unknown",
        "verdict",
        "fabric_estimated_as",
        "fabric_range",
        "transparency_score",
        *estimator.provider_annotations,
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    counts = frame.groupby("provider").size().rename("offers")
    best = frame.sort_values("rank").groupby("provider", as_index=False).first()
    best = best.merge(counts, left_on="provider", right_index=True)
    return best.sort_values("rank")[columns].reset_index(drop=True)


# what every what-if row starts with (the offer) and ends with (why it is not ranked with the
# other fabric, and its ids)
_WHAT_IF_HEAD = ("rank", "provider", "sold_by", "offer_label", "gpu_model", "gpus_per_node", "gpus")
_WHAT_IF_TAIL = ("what_if_note", "instance_type", "offer_key")
# the what-if comparison's columns: each ranked offer today and with the other fabric
WHAT_IF_COLUMNS = [
    *_WHAT_IF_HEAD,
    "fabric_now",
    "fabric_what_if",
    "fabric_gbps_what_if",
    "time_to_train_h",
    "time_to_train_h_low",
    "time_to_train_h_what_if",
    "time_to_train_h_low_what_if",
    "time_change",
    "cost_usd",
    "cost_usd_low",
    "cost_usd_what_if",
    "cost_usd_low_what_if",
    "cost_change_usd",
    # the model's error held out: the same on either fabric (it depends on GPU and job only)
    *error_bands.FIELDS,
    "comm_fraction_exposed",
    "comm_fraction_exposed_what_if",
    "verdict",
    "verdict_what_if",
    *_WHAT_IF_TAIL,
]
# the same for a served model: output tokens/s per GPU and USD per million output tokens at
# both fabrics, the GPUs rented (a slower fabric may need more to carry the load), the TPOT,
# the fabric's share of a decode step (or of the TTFT, for a KV cache handed over the fabric),
# the replica's layout and the verdict
SERVING_WHAT_IF_COLUMNS = [
    *_WHAT_IF_HEAD,
    "gpus_what_if",
    "fabric_now",
    "fabric_what_if",
    "fabric_gbps_what_if",
    "tokens_per_s_per_gpu",
    "tokens_per_s_per_gpu_low",
    "tokens_per_s_per_gpu_what_if",
    "tokens_per_s_per_gpu_low_what_if",
    "tokens_change",
    "usd_per_million_output_tokens",
    "usd_per_million_output_tokens_what_if",
    "usd_per_million_change",
    # the serving model's error held out: the same on either fabric (GPU and model only)
    *error_bands.FIELDS,
    "tpot_ms",
    "tpot_ms_low",
    "tpot_ms_what_if",
    "tpot_ms_low_what_if",
    "fabric_share",
    "fabric_share_what_if",
    "layout",
    "layout_what_if",
    "verdict",
    "verdict_what_if",
    *_WHAT_IF_TAIL,
]


def _ratio_change(now: Any, then: Any) -> float | None:
    """``then`` over ``now``, less one (+0.25: a quarter more); None where either is unknown."""
    if _missing(now) or _missing(then) or not now:
        return None
    return float(then) / float(now) - 1


# the what-if's own columns of the fabric each offer is costed at
_WHAT_IF_FABRIC = ("fabric_what_if", "fabric_gbps_what_if")


@dataclass(frozen=True)
class WhatIfView:
    """What a what-if compares for one kind of workload: its ``columns``, in which a ranked
    row's field ``name`` stands as it is and, as ``name_what_if``, with the other fabric
    (``compared``); the changes computed from the row now and with the other fabric; and
    what does not change, in words (the closing of ``what_if_rule``)."""

    columns: tuple[str, ...]
    # column -> its value from (the row now, the row with the other fabric)
    changes: Mapping[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Any]]
    unchanged: str

    @property
    def compared(self) -> tuple[str, ...]:
        """The ranked row's fields shown with the other fabric too."""
        return tuple(
            name.removesuffix("_what_if")
            for name in self.columns
            if name.endswith("_what_if") and name not in _WHAT_IF_FABRIC
        )


WHAT_IF_VIEWS: dict[str, WhatIfView] = {
    "training": WhatIfView(
        tuple(WHAT_IF_COLUMNS),
        {
            "time_change": lambda now, then: _ratio_change(
                now["time_to_train_h"], then["time_to_train_h"]
            ),
            "cost_change_usd": lambda now, then: then["cost_usd"] - now["cost_usd"],
        },
        "One-node jobs do not change. Changes compare the worse ends.",
    ),
    "serving": WhatIfView(
        tuple(SERVING_WHAT_IF_COLUMNS),
        {
            "tokens_change": lambda now, then: _ratio_change(
                now["tokens_per_s_per_gpu"], then["tokens_per_s_per_gpu"]
            ),
            "usd_per_million_change": lambda now, then: _ratio_change(
                now["usd_per_million_output_tokens"], then["usd_per_million_output_tokens"]
            ),
        },
        "A replica inside one node does not change (its verdict: the fabric does not "
        "matter); several replicas never talk to each other. Changes compare the ends the "
        "offers are ranked at (the worse: fewer output tokens per second per GPU).",
    ),
}


def what_if_changes(base: RankResult, other: RankResult) -> pd.DataFrame:
    """Each offer ranked in ``base``, as it is and as ``other`` (``base.what_if(fabric)``)
    estimates it: the fabric each is costed at (class and Gb/s per GPU), the workload kind's
    measures at both (``WHAT_IF_VIEWS``: a training job's time, cost and exposed
    communication; a served model's tokens/s per GPU, USD per million output tokens, TPOT and
    the fabric's share), the change, and why an offer is not ranked with the other fabric.
    One function, so that the app, the CLI and the memo say the same thing."""
    view = WHAT_IF_VIEWS[base.estimator.kind]
    alternative = other.offers.set_index("offer_key")
    reasons = dict(zip(other.excluded["offer_key"], other.excluded["reason"], strict=False))
    rows = []
    for row in frames.records(base.offers):
        key = row["offer_key"]
        entry = {name: row.get(name) for name in view.columns}
        entry["fabric_now"] = row["fabric_estimated_as"]
        if key in alternative.index:
            changed = alternative.loc[key]
            entry |= {
                "fabric_what_if": changed["fabric_estimated_as"],
                "fabric_gbps_what_if": changed["fabric_gbps_costed"],
                **{f"{name}_what_if": changed[name] for name in view.compared},
                **{name: change(row, changed) for name, change in view.changes.items()},
                "what_if_note": None,
            }
        else:
            entry["what_if_note"] = reasons.get(key, "not ranked with this fabric")
        rows.append(entry)
    frame = pd.DataFrame(rows, columns=list(view.columns))
    for name in view.compared:  # a count stays a whole number where an offer is not ranked
        if pd.api.types.is_integer_dtype(base.offers[name]):
            frame[f"{name}_what_if"] = frame[f"{name}_what_if"].astype("Int64")
    return frame


def what_if_summary(changes: pd.DataFrame, fabric_class: str, kind: str = "training") -> str:
    """How many offers of a ``kind`` ranking the other fabric changes (``what_if_changes``),
    in one sentence (the CLI and the app): those it leaves as they are (a one-node job, a
    replica inside one node, an offer already on that fabric) are counted, not read row by
    row."""
    moved = changes[list(WHAT_IF_VIEWS[kind].changes)].astype(float)
    ranked = changes["what_if_note"].isna()
    same = ranked & (moved.fillna(0.0) == 0.0).all(axis=1)
    left_out = int((~ranked).sum())
    text = (
        f"{int((ranked & ~same).sum()):,} of {len(changes):,} offers change with "
        f"{fabric_class}; {int(same.sum()):,} read the same on it"
    )
    return text + (f"; {left_out:,} are not ranked with it" if left_out else "") + "."


def what_if_rule(fabric_class: str, closing: bool = True, kind: str = "training") -> str:
    """How a what-if costs each offer's fabric, in words (the app, the CLI and the memo);
    ``closing`` adds what does not change for a workload of ``kind`` and what the change
    compares."""
    gbps = WHAT_IF_GBPS_PER_NODE.get(fabric_class)
    per_node = f"{gbps:,.0f} Gb/s per node" if gbps else "no stated figure"
    return (
        f"Each multi-node offer is costed as if its nodes were joined by {fabric_class} at "
        f"{per_node} (what that class carries where providers document it), shared by the "
        f"node's GPUs; an offer that already states {fabric_class} with its bandwidth keeps "
        "its own figure."
    ) + (f" {WHAT_IF_VIEWS[kind].unchanged}" if closing else "")


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as JSON-ready dicts: NULL as None, numpy scalars as Python, times as ISO text."""
    return [{k: _plain(v) for k, v in row.items()} for row in frames.records(frame)]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp | datetime):
        return value.isoformat()
    return value
