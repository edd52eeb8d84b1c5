"""Contracts shared by every package: what a scraped offer and a fabric fact are.

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
from typing import Annotated, Self

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


OFFER_COLUMNS: tuple[str, ...] = tuple(Offer.model_fields)
FABRIC_COLUMNS: tuple[str, ...] = tuple(FabricFact.model_fields)


def utc_now() -> datetime:
    return datetime.now(UTC)
