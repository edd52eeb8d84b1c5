"""Contracts shared by every package: what a scraped offer, a fabric fact, a quote and a
provider's answer are.

This module is the bottom of the import graph: it imports nothing of ours.

Units, once for every field that carries one:

- prices: ``price`` and ``currency`` are exactly as published (per hour, on the
  offer's ``price_basis``); ``price_usd_per_hour`` is the whole configuration
  (``gpu_count`` GPUs) per hour in US dollars, and ``price_usd_per_gpu_hour`` the
  same divided by ``gpu_count``. For ``gpu_only_host_extra`` offers both exclude the
  host (CPU, RAM) that the provider bills on top.
- memory: ``gpu_memory_gb`` is per GPU, ``ram_gb`` per instance, both in GB.
- bandwidth: ``fabric_gbps_per_node`` / ``fabric_gbps_per_gpu`` are inter-node
  bandwidth in gigabits per second.
- times: ``observed_at`` is timezone-aware (when our run saw it); ``source_date`` is the
  date the source itself states, or the day a curator read it, if known.
- ``zones``: how many availability zones of ``region`` sell the offer, where a catalog
  lists each zone (their rows collapsed into one regional offer).

Unknown is ``None`` and stays ``None``: nothing here guesses.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    HttpUrl,
    model_validator,
)


class PricingTier(StrEnum):
    """How an offer is bought. Tiers are never mixed in one number."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    DYNAMIC = "dynamic"  # price moves with demand but is not pre-emptible (e.g. DataCrunch)
    RESERVED_1M = "reserved_1m"
    RESERVED_3M = "reserved_3m"
    RESERVED_6M = "reserved_6m"
    RESERVED_1Y = "reserved_1y"
    RESERVED_2Y = "reserved_2y"
    RESERVED_3Y = "reserved_3y"


class PriceBasis(StrEnum):
    """What the published price covers."""

    PER_INSTANCE = "per_instance"
    PER_GPU = "per_gpu"
    GPU_ONLY_HOST_EXTRA = "gpu_only_host_extra"


class FabricClass(StrEnum):
    """The class of network connecting an instance type's nodes."""

    INFINIBAND = "infiniband"
    SPECTRUM_X = "spectrum_x"  # AI-optimised adaptive-routing Ethernet, incl. well-tuned RoCE
    ROCE = "roce"  # RoCEv2 on plain ECMP
    EFA = "efa"
    TCPX = "tcpx"  # Google GPUDirect-TCPX / TCPXO
    ETHERNET = "ethernet"  # TCP without RDMA
    ULTRA_ETHERNET = "ultra_ethernet"
    NONE = "none"  # single node only
    UNKNOWN = "unknown"


class ObtainedBy(StrEnum):
    """How a fact reached us."""

    SCRAPED = "scraped"  # parsed from an HTML page
    API = "api"  # a machine-readable endpoint of the provider
    CATALOG = "catalog"  # a third party's public catalog (e.g. SkyPilot's CSVs)
    CURATED = "curated"  # entered by hand from a cited page, with the quote


class SourceGrade(StrEnum):
    """How far a fact's source can be trusted (docs/TRANSPARENCY.md)."""

    PROVIDER = "provider"  # the provider's own docs, API, pricing page or signed answer
    MEASURED = "measured"  # an independent benchmark with its raw output, an MLPerf submission
    THIRD_PARTY = "third_party"  # blogs, books, mirrors, aggregators: never a "yes" alone


class RunMode(StrEnum):
    LIVE = "live"
    REPLAY = "replay"


class RunStatus(StrEnum):
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    QUARANTINED = "quarantined"
    ABORTED = "aborted"


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"must be finite (got {value})")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_]*$", max_length=64)]
PositiveFloat = Annotated[float, Field(gt=0), AfterValidator(_finite)]
OptionalPositiveFloat = Annotated[float | None, Field(default=None, gt=0), AfterValidator(_finite)]

# Per-GPU price is this close to total / gpu_count (relative), to allow for rounding
# in published per-GPU figures.
_PER_GPU_REL_TOLERANCE = 0.005


class _Contract(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        str_strip_whitespace=True,
        use_enum_values=False,
    )


class Offer(_Contract):
    """One purchasable GPU configuration at one price on one tier."""

    provider: Slug
    source: Slug
    instance_type: NonBlank
    region: str | None = None
    zones: int | None = Field(
        default=None, gt=0, le=1000, description="availability zones of the region selling it"
    )
    gpu_name: str | None = Field(default=None, description="the GPU as the provider names it")
    gpu_model: str | None = Field(
        default=None, description="canonical id from gpus.csv, None when unknown"
    )
    gpu_count: int = Field(gt=0, le=100_000)
    gpu_memory_gb: OptionalPositiveFloat = None
    vcpus: OptionalPositiveFloat = None
    ram_gb: OptionalPositiveFloat = None
    pricing_tier: PricingTier
    price_basis: PriceBasis
    price: PositiveFloat
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    price_usd_per_hour: PositiveFloat
    price_usd_per_gpu_hour: PositiveFloat
    availability: str | None = None
    source_url: HttpUrl
    obtained_by: ObtainedBy
    observed_at: AwareDatetime

    @model_validator(mode="after")
    def _per_gpu_price_matches_total(self) -> Self:
        expected = self.price_usd_per_hour / self.gpu_count
        if abs(self.price_usd_per_gpu_hour - expected) > _PER_GPU_REL_TOLERANCE * expected:
            raise ValueError(
                f"offer {self.instance_type!r} from {self.provider}: price_usd_per_gpu_hour "
                f"{self.price_usd_per_gpu_hour} != price_usd_per_hour / gpu_count ({expected:.4f})"
            )
        return self

    @property
    def key(self) -> tuple[str, str, str | None, str]:
        """What identifies an offer within one run."""
        return (self.provider, self.instance_type, self.region, self.pricing_tier.value)


class FabricFact(_Contract):
    """What connects the nodes of one instance type, with the evidence for it."""

    provider: Slug
    source: Slug
    instance_type: NonBlank
    gpu_name: str | None = None
    gpu_model: str | None = None
    fabric_class: FabricClass
    fabric_product: str | None = None
    fabric_gbps_per_node: OptionalPositiveFloat = None
    fabric_gbps_per_gpu: OptionalPositiveFloat = None
    rdma: bool | None = None
    gpudirect_rdma: bool | None = None
    multi_node: bool | None = None
    max_cluster_gpus: int | None = Field(default=None, gt=0)
    topology: str | None = None
    intra_node_link: str | None = None
    published_benchmark_url: HttpUrl | None = None
    source_url: HttpUrl
    evidence: NonBlank = Field(max_length=2000, description="the sentence quoted from the source")
    source_date: date | None = None
    obtained_by: ObtainedBy
    source_grade: SourceGrade
    observed_at: AwareDatetime

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.fabric_class is FabricClass.NONE and self.multi_node:
            raise ValueError(
                f"fabric fact {self.instance_type!r} from {self.provider}: "
                "fabric_class 'none' cannot be multi_node"
            )
        if self.gpudirect_rdma and self.rdma is False:
            raise ValueError(
                f"fabric fact {self.instance_type!r} from {self.provider}: "
                "gpudirect_rdma requires rdma"
            )
        return self


# months a reserved tier commits to
TIER_MONTHS: dict[PricingTier, int] = {
    PricingTier.RESERVED_1M: 1,
    PricingTier.RESERVED_3M: 3,
    PricingTier.RESERVED_6M: 6,
    PricingTier.RESERVED_1Y: 12,
    PricingTier.RESERVED_2Y: 24,
    PricingTier.RESERVED_3Y: 36,
}


class Quote(_Contract):
    """A price a provider (or a reseller) quoted to the buyer, with its terms, as entered.

    Stored append-only (``quotes``); ranked beside the list offers with ``obtained_by``
    quote and the date it was quoted. The field descriptions are the template's
    documentation (``fabricscope quote template``, docs/QUOTES.md)."""

    provider: Slug = Field(
        description="the cloud the GPUs run on, as fabricscope names it (the providers table: "
        "lambda, coreweave, aws...)"
    )
    sold_by: Slug | None = Field(
        default=None, description="the reseller who quoted, if not the provider itself"
    )
    configuration: NonBlank = Field(
        max_length=200, description="the instance type or configuration as quoted"
    )
    region: str | None = Field(default=None, max_length=100, description="region or site")
    gpu_model: NonBlank = Field(
        description="the GPU: a canonical id or an alias from gpus.csv (H100 SXM, H200, B200...)"
    )
    gpus_per_node: int = Field(default=8, gt=0, le=576, description="GPUs in one node")
    gpus: int | None = Field(
        default=None, gt=0, le=1_000_000, description="GPUs quoted in all (the capacity offered)"
    )
    price_usd: PositiveFloat = Field(description="the price in US dollars, on price_per")
    price_per: Literal["gpu_hour", "node_hour"] = Field(
        description="what price_usd buys: one GPU-hour or one node-hour"
    )
    pricing_tier: PricingTier = Field(
        description="on_demand, spot, dynamic, reserved_1m, reserved_3m, reserved_6m, "
        "reserved_1y, reserved_2y or reserved_3y"
    )
    term_months: int | None = Field(
        default=None,
        gt=0,
        le=120,
        description="the committed term in months, paid in full (a reserved tier implies its "
        "own: reserved_1y is 12)",
    )
    min_commit_gpus: int | None = Field(
        default=None, gt=0, le=1_000_000, description="the fewest GPUs the quote lets you rent"
    )
    min_commit_months: float | None = Field(
        default=None, gt=0, le=120, description="the shortest rental in months"
    )
    booked_from: date | None = Field(default=None, description="calendar booking: first day")
    booked_to: date | None = Field(default=None, description="calendar booking: last day")
    available_from: date | None = Field(
        default=None, description="the day the capacity is available"
    )
    valid_until: date | None = Field(default=None, description="the last day the quote holds")
    fabric_class: FabricClass | None = Field(
        default=None,
        description="the fabric as quoted: infiniband, spectrum_x, roce, efa, tcpx, ethernet, "
        "ultra_ethernet or none",
    )
    fabric_gbps_per_gpu: OptionalPositiveFloat = Field(
        default=None, description="inter-node bandwidth per GPU in Gb/s, as quoted"
    )
    multi_node: bool | None = Field(
        default=None, description="whether the quote's nodes form one cluster (true/false)"
    )
    fabric_note: str | None = Field(
        default=None, max_length=2000, description="the fabric in the provider's words"
    )
    quoted_at: date = Field(description="the day the provider quoted")
    source: NonBlank = Field(
        max_length=500,
        description="where the quote is: 'email from sales, 2026-11-28', 'order form #123'",
    )
    source_url: HttpUrl | None = Field(default=None, description="a link to it, if any")
    notes: str | None = Field(default=None, max_length=2000, description="anything else")
    entered_by: NonBlank = Field(max_length=200, description="who entered the quote")

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.booked_from and self.booked_to and self.booked_to < self.booked_from:
            raise ValueError("booked_to is before booked_from")
        if self.valid_until and self.valid_until < self.quoted_at:
            raise ValueError("valid_until is before quoted_at")
        implied = TIER_MONTHS.get(self.pricing_tier)
        if implied and self.term_months and self.term_months != implied:
            raise ValueError(
                f"term_months {self.term_months} contradicts pricing_tier "
                f"{self.pricing_tier.value} ({implied} months)"
            )
        if self.fabric_class is FabricClass.NONE and self.multi_node:
            raise ValueError("fabric_class 'none' cannot be multi_node")
        if self.gpus and self.gpus % self.gpus_per_node:
            raise ValueError(
                f"gpus {self.gpus} is not a whole number of {self.gpus_per_node}-GPU nodes"
            )
        return self

    @property
    def price_usd_per_gpu_hour(self) -> float:
        if self.price_per == "gpu_hour":
            return self.price_usd
        return self.price_usd / self.gpus_per_node

    @property
    def committed_months(self) -> int | None:
        """The term paid in full: the one stated, else the reserved tier's."""
        return self.term_months or TIER_MONTHS.get(self.pricing_tier)


QUOTE_FIELDS: tuple[str, ...] = tuple(Quote.model_fields)


class RfiAnswer(_Contract):
    """A provider's answer to one question of the transparency questionnaire (the RFI), as
    the buyer entered it. It is the provider's own word, so provider-grade evidence, dated
    the day the provider answered (fabricscope/evidence/transparency.py)."""

    provider: Slug = Field(description="the provider that answered, as fabricscope names it")
    question_id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)] = Field(
        description="the question's id in the questionnaire (fabric_type, bandwidth, ...)"
    )
    value: Literal["yes", "partial", "no"] = Field(
        description="what the answer amounts to: yes, partial or no (leave a question the "
        "provider did not answer out)"
    )
    answer: NonBlank = Field(max_length=5000, description="the provider's answer, in its words")
    evidence_url: HttpUrl | None = Field(
        default=None, description="a link to the document the answer rests on, if any"
    )
    attachment: str | None = Field(
        default=None, max_length=300, description="the name of an attached document, if any"
    )
    answered_on: date = Field(description="the day the provider answered")
    answered_by: NonBlank = Field(
        max_length=200, description="who answered for the provider (name and role)"
    )
    entered_by: NonBlank = Field(max_length=200, description="who entered the answer")


RFI_ANSWER_FIELDS: tuple[str, ...] = tuple(RfiAnswer.model_fields)
OFFER_COLUMNS: tuple[str, ...] = tuple(Offer.model_fields)
FABRIC_COLUMNS: tuple[str, ...] = tuple(FabricFact.model_fields)


def utc_now() -> datetime:
    return datetime.now(UTC)
