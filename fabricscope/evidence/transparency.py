"""The transparency questionnaire: what to ask a provider before renting its fabric, and what
the warehouse already answers.

The questions live in ``fabricscope/evidence/transparency_questions.json`` (versioned; each with a
weight, why it matters to a multi-node training buyer, and a source). ``answers`` answers every
question for every provider with current offers or fabric facts, from those current facts only
(``fabric_current``, ``offers_current``; the ``providers`` table gives display names). Nothing
is looked up elsewhere and nothing is guessed.

An answer is ``yes``, ``partial``, ``no`` or ``unknown``:

- ``yes``, ``partial`` and ``no`` always carry evidence: the quote (a fact's ``evidence``
  column, or a description generated from the price rows), the source URL, when we observed it
  (and the date the source itself states, if any), how it was obtained and what it states.
- ``unknown`` carries none: no current fact answers the question. Unknown never counts as yes.
- ``no`` needs a fact that states the negative (``rdma`` or ``gpudirect_rdma`` false, fabric
  class ``none``). A missing fact or a missing row is ``unknown``, never ``no``.

Rules. A provider's *facts* are its rows of ``fabric_current``; its *product lines* are the
distinct ``instance_type`` values of those facts; its *price lists* are its rows of
``offers_current`` grouped by source.

``fabric_type``
    A product line is stated when one of its facts gives a class other than ``unknown``.
    yes: every product line stated; partial: some stated, the others only ``unknown``;
    no: every stated class is ``none`` (single node only); unknown: nothing stated.
``bandwidth``
    yes if a fact states ``fabric_gbps_per_gpu`` or ``fabric_gbps_per_node``.
``rdma``
    Per fact: yes if ``rdma`` and ``gpudirect_rdma`` are both true; partial if one is true and
    the other not stated or false; no if one is false and neither is true; a fact stating
    neither is not counted. The provider takes its best fact (yes > partial > no).
``topology``
    yes if a fact states a ``topology``.
``cluster_size``
    yes if a fact states ``max_cluster_gpus``.
``multi_node_benchmarks``
    yes if a fact states a ``published_benchmark_url`` (not checked to be multi-node: the
    evidence gives the link to check).
``public_prices``
    yes if a price list was obtained by ``api`` or ``scraped`` (the provider's own price API or
    page); partial if only by ``catalog`` (a third party's catalog, e.g. SkyPilot's) or
    ``curated`` (typed in from a cited page); unknown without current offers (we hold no
    observation, so we cannot say the prices are not public).
``pricing_terms``
    yes if the current offers include a ``spot`` tier and a ``reserved_*`` tier; partial if
    only one of the two; unknown otherwise: a price list without spot rows does not state
    that there is no spot price (our spider may not read that tier), so it is never ``no``.
    ``dynamic`` is neither spot nor reserved.

The questions other than ``fabric_type`` ask whether the provider states something at all, so
one fact stating it is enough; the evidence says for which product line.

Grades: every fact's source is graded ``provider`` (the provider's own docs, API, pricing page
or signed answer), ``measured`` (an independent benchmark with its raw output, an MLPerf
submission of that system) or ``third_party`` (blogs, books, mirrors, aggregators). A ``yes``
needs provider or measured evidence: one that rests on third-party evidence alone is
``partial`` and says so. Price lists: the provider's own API or page is provider-grade, a
catalog third-party.

Evidence: of the facts that make the answer, provider or measured ones first, then the most
recently observed (then one with a source date, then by source and instance type, so the
choice is stable); of the price lists,
the provider's own API before its page before hand entry before a catalog, then the most
recent.

Score: ``sum(weight x credit) / sum(weights)`` over the questionnaire, with credit yes 1,
partial 0.5, no 0, unknown 0, so it lies in [0, 1] and is reported with the questionnaire
version and the snapshot it was computed on. A ``no`` is an answered question (the buyer
learns something true), but it scores 0 because the score measures how much a multi-node
buyer can rely on without asking, and "no RDMA" or "single node only" leaves the buyer without
the thing asked about: a transparency score that rewarded stating an absence would rank a
provider that documents having no RDMA above one that has it and says nothing. The ``answered``
count in ``ProviderScore`` keeps the difference between "no" and "unknown" visible.

Providers' own answers. When a provider answers a question of the questionnaire (an RFI
reply the buyer entered: ``fabricscope answers import``, ``rfi_answers_current``), its answer
decides that question: the value the buyer read in it (yes, partial or no), provider-grade
evidence quoting the reply, dated the day it was given, linked to its document or attachment,
and the reason naming who answered and when, then what the published facts say. The facts'
evidence follows the reply's. A question the provider has not answered keeps the rules above.

Pure functions apart from the one read of the warehouse (``read_inputs``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple, Self
from urllib.parse import quote as quote_url

import duckdb
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fabricscope.frames import records
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import read_frames

QUESTIONNAIRE_FILE = Path(__file__).parent / "transparency_questions.json"

# The columns each rule reads; the queries list them explicitly.
FACT_COLUMNS: tuple[str, ...] = (
    "provider",
    "source",
    "instance_type",
    "fabric_class",
    "fabric_product",
    "fabric_gbps_per_node",
    "fabric_gbps_per_gpu",
    "rdma",
    "gpudirect_rdma",
    "max_cluster_gpus",
    "topology",
    "published_benchmark_url",
    "source_url",
    "evidence",
    "source_date",
    "obtained_by",
    "source_grade",
    "observed_at",
)
PRICE_EVIDENCE_COLUMNS: tuple[str, ...] = (
    "provider",
    "source",
    "instance_type",
    "region",
    "pricing_tier",
    "price_basis",
    "price",
    "currency",
    "source_url",
    "obtained_by",
    "observed_at",
)
PROVIDER_COLUMNS: tuple[str, ...] = ("provider", "display_name")
# a provider's current answer to a question, as the buyer entered it (rfi_answers_current)
RFI_COLUMNS: tuple[str, ...] = (
    "provider",
    "question_id",
    "value",
    "answer",
    "evidence_url",
    "attachment",
    "answered_on",
    "answered_by",
    "entered_at",
)

# each selects exactly the columns above (tests/warehouse/test_reads.py)
QUERIES: dict[str, str] = {
    "facts": reads.sql("transparency_facts"),
    "offers": reads.sql("transparency_offers"),
    "providers": reads.sql("transparency_providers"),
    "rfi": reads.sql("rfi_answers_current"),
}


class TransparencyError(ValueError):
    """A questionnaire, an input or a request that cannot be answered; the message says why."""


# ----------------------------------------------------------------------------- models


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class AnswerValue(StrEnum):
    YES = "yes"
    PARTIAL = "partial"
    NO = "no"
    UNKNOWN = "unknown"


# What each answer is worth in the score (see the module docstring for why "no" is 0).
CREDIT: Mapping[AnswerValue, float] = {
    AnswerValue.YES: 1.0,
    AnswerValue.PARTIAL: 0.5,
    AnswerValue.NO: 0.0,
    AnswerValue.UNKNOWN: 0.0,
}
# Which answer a provider takes when its facts say different things: the most it states.
_RANK: Mapping[AnswerValue, int] = {
    AnswerValue.YES: 3,
    AnswerValue.PARTIAL: 2,
    AnswerValue.NO: 1,
    AnswerValue.UNKNOWN: 0,
}


class Question(_Model):
    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)
    text: str = Field(min_length=10, description="the question as a buyer would send it in an RFI")
    weight: float = Field(gt=0, allow_inf_nan=False)
    why: str = Field(min_length=10, description="one sentence: what it changes for the buyer")
    source: str = Field(min_length=5, description="where the 'why' comes from")


class Questionnaire(_Model):
    version: str = Field(min_length=1, max_length=32)
    description: str = ""
    questions: tuple[Question, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> Self:
        seen: set[str] = set()
        for question in self.questions:
            if question.id in seen:
                raise ValueError(f"duplicate question id {question.id!r}")
            seen.add(question.id)
        return self

    @property
    def total_weight(self) -> float:
        return math.fsum(q.weight for q in self.questions)

    def question(self, question_id: str) -> Question:
        for question in self.questions:
            if question.id == question_id:
                return question
        raise TransparencyError(
            f"question {question_id!r} is not in questionnaire version {self.version}"
        )


# evidence a "yes" may rest on; third-party sources (blogs, mirrors, aggregators) give partial
TRUSTED_GRADES = frozenset({"provider", "measured"})


class Evidence(_Model):
    """One observation an answer rests on, as stored in the warehouse."""

    quote: str = Field(min_length=1, description="the fact's evidence, or the price rows described")
    source_url: str = Field(pattern=r"^[a-z][a-z0-9+.-]*://\S+$")
    observed_at: datetime = Field(description="when we observed it (timezone-aware)")
    source_date: date | None = Field(default=None, description="the date the source states")
    obtained_by: str = Field(description="api | scraped | catalog | curated | rfi")
    source_grade: str | None = Field(
        default=None,
        description="provider | measured | third_party (docs/TRANSPARENCY.md); None: not graded",
    )
    source: str = Field(description="the warehouse source (spider) that recorded it")
    instance_type: str | None = Field(default=None, description="the product line of a fact")
    stated: str = Field(description="what it states that decides the answer")


class Answer(_Model):
    provider: str
    provider_name: str
    question_id: str
    value: AnswerValue
    reason: str = Field(description="why this answer, in one line")
    evidence: tuple[Evidence, ...] = Field(description="best first; empty only when unknown")
    questionnaire_version: str
    snapshot_id: int | None = None

    @model_validator(mode="after")
    def _evidence_matches_value(self) -> Self:
        where = f"answer to {self.question_id!r} for {self.provider}"
        if self.value is AnswerValue.UNKNOWN and self.evidence:
            raise ValueError(f"{where}: 'unknown' cannot carry evidence")
        if self.value is not AnswerValue.UNKNOWN and not self.evidence:
            raise ValueError(f"{where}: {self.value.value!r} needs evidence")
        return self


class ProviderScore(_Model):
    provider: str
    provider_name: str
    score: float = Field(ge=0, le=1, description="weighted share answered: yes 1, partial 0.5")
    answered: int = Field(ge=0, description="questions answered yes, partial or no")
    yes: int = Field(ge=0)
    partial: int = Field(ge=0)
    no: int = Field(ge=0)
    unknown: int = Field(ge=0)
    open_question_ids: tuple[str, ...] = Field(description="not answered yes: the RFI list")
    questionnaire_version: str
    snapshot_id: int | None = None


# ---------------------------------------------------------------------- questionnaire


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "questionnaire"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


@cache
def load_questionnaire(path: Path = QUESTIONNAIRE_FILE) -> Questionnaire:
    """The versioned questionnaire, validated; every question must have an answering rule."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TransparencyError(f"{path}: no questionnaire file") from None
    except json.JSONDecodeError as exc:
        raise TransparencyError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    try:
        questionnaire = Questionnaire.model_validate(data)
    except ValidationError as exc:
        raise TransparencyError(f"{path}: {_validation_message(exc)}") from None
    without_rule = [q.id for q in questionnaire.questions if q.id not in RULES]
    if without_rule:
        raise TransparencyError(
            f"{path}: no answering rule for question(s) {', '.join(without_rule)}; "
            f"fabricscope/evidence/transparency.py answers: {', '.join(RULES)}"
        )
    return questionnaire


# ----------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class TransparencyInputs:
    """The rows the rules read: ``FACT_COLUMNS`` of fabric_current, ``PRICE_EVIDENCE_COLUMNS`` of
    offers_current, ``PROVIDER_COLUMNS`` of providers, the snapshot they came from, and the
    providers' own answers (``RFI_COLUMNS`` of rfi_answers_current; None: none entered)."""

    facts: pd.DataFrame
    offers: pd.DataFrame
    providers: pd.DataFrame | None = None
    snapshot_id: int | None = None
    rfi: pd.DataFrame | None = None


def read_inputs(warehouse: Path) -> TransparencyInputs:
    """One read-only read of the published snapshot (one connection, hence one snapshot)."""
    snapshot, frames = read_frames(warehouse, QUERIES)
    return TransparencyInputs(
        frames["facts"], frames["offers"], frames["providers"], snapshot.snapshot_id, frames["rfi"]
    )


def inputs_from_connection(con: duckdb.DuckDBPyConnection) -> TransparencyInputs:
    """The same rows from an open connection (the caller owns it and its snapshot)."""
    frames = {name: con.execute(sql).df() for name, sql in QUERIES.items()}
    try:
        row = con.execute(reads.sql("latest_snapshot")).fetchone()
    except duckdb.CatalogException:
        row = None
    snapshot_id = int(row[0]) if row is not None and row[0] is not None else None
    return TransparencyInputs(
        frames["facts"], frames["offers"], frames["providers"], snapshot_id, frames["rfi"]
    )


def _as_inputs(
    source: TransparencyInputs | Path | str | duckdb.DuckDBPyConnection,
) -> TransparencyInputs:
    if isinstance(source, TransparencyInputs):
        return source
    if isinstance(source, duckdb.DuckDBPyConnection):
        return inputs_from_connection(source)
    if isinstance(source, str | Path):
        return read_inputs(Path(source))
    raise TransparencyError(
        f"cannot answer from a {type(source).__name__}: pass a warehouse path, "
        "a DuckDB connection or TransparencyInputs"
    )


def _records(frame: pd.DataFrame, columns: Sequence[str], name: str) -> list[dict[str, Any]]:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise TransparencyError(f"{name} rows lack column(s) {', '.join(missing)}")
    return records(frame.loc[:, list(columns)])


def _as_datetime(value: Any) -> datetime:
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if not isinstance(value, datetime):
        raise TransparencyError(f"observed_at must be a timestamp (got {value!r})")
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _as_date(value: Any) -> date | None:
    if value is None:
        return None
    if isinstance(value, pd.Timestamp):
        return value.date()
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    raise TransparencyError(f"source_date must be a date (got {value!r})")


@dataclass(frozen=True)
class _Fact:
    source: str
    instance_type: str
    fabric_class: str
    fabric_product: str | None
    gbps_per_node: float | None
    gbps_per_gpu: float | None
    rdma: bool | None
    gpudirect_rdma: bool | None
    max_cluster_gpus: int | None
    topology: str | None
    benchmark_url: str | None
    source_url: str
    evidence: str
    source_date: date | None
    obtained_by: str
    source_grade: str | None
    observed_at: datetime

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> _Fact:
        def flag(value: Any) -> bool | None:
            return None if value is None else bool(value)

        def number(value: Any) -> float | None:
            return None if value is None else float(value)

        def text(value: Any) -> str | None:
            if value is None:
                return None
            return str(value).strip() or None

        return cls(
            source=str(row["source"]),
            instance_type=str(row["instance_type"]),
            fabric_class=str(row["fabric_class"]),
            fabric_product=text(row["fabric_product"]),
            gbps_per_node=number(row["fabric_gbps_per_node"]),
            gbps_per_gpu=number(row["fabric_gbps_per_gpu"]),
            rdma=flag(row["rdma"]),
            gpudirect_rdma=flag(row["gpudirect_rdma"]),
            max_cluster_gpus=None
            if row["max_cluster_gpus"] is None
            else int(row["max_cluster_gpus"]),
            topology=text(row["topology"]),
            benchmark_url=text(row["published_benchmark_url"]),
            source_url=str(row["source_url"]),
            evidence=str(row["evidence"]),
            source_date=_as_date(row["source_date"]),
            obtained_by=str(row["obtained_by"]),
            source_grade=text(row["source_grade"]),
            observed_at=_as_datetime(row["observed_at"]),
        )

    @property
    def trusted(self) -> bool:
        """The provider's own word or an independent measurement (not third-party only)."""
        return self.source_grade in TRUSTED_GRADES

    def evidence_for(self, stated: str) -> Evidence:
        return Evidence(
            quote=self.evidence,
            source_url=self.source_url,
            observed_at=self.observed_at,
            source_date=self.source_date,
            obtained_by=self.obtained_by,
            source_grade=self.source_grade,
            source=self.source,
            instance_type=self.instance_type,
            stated=stated,
        )


@dataclass(frozen=True)
class _PriceRow:
    source: str
    instance_type: str
    region: str | None
    pricing_tier: str
    price_basis: str
    price: float
    currency: str
    source_url: str
    obtained_by: str
    observed_at: datetime

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> _PriceRow:
        return cls(
            source=str(row["source"]),
            instance_type=str(row["instance_type"]),
            region=None if row["region"] is None else str(row["region"]),
            pricing_tier=str(row["pricing_tier"]),
            price_basis=str(row["price_basis"]),
            price=float(row["price"]),
            currency=str(row["currency"]),
            source_url=str(row["source_url"]),
            obtained_by=str(row["obtained_by"]),
            observed_at=_as_datetime(row["observed_at"]),
        )


@dataclass(frozen=True)
class _ProviderData:
    facts: tuple[_Fact, ...]
    prices: tuple[_PriceRow, ...]


class _Decision(NamedTuple):
    value: AnswerValue
    reason: str
    evidence: tuple[Evidence, ...] = ()


Rule = Callable[[_ProviderData], _Decision]


# ------------------------------------------------------------------- fabric rules


def _fact_preference(fact: _Fact) -> tuple[bool, float, bool, str, str]:
    """Provider or measured evidence first, then the most recently observed, then facts whose
    source states a date."""
    return (
        not fact.trusted,
        -fact.observed_at.timestamp(),
        fact.source_date is None,
        fact.source,
        fact.instance_type,
    )


def _no_facts(facts: Sequence[_Fact], subject: str) -> str:
    if not facts:
        return "no current fabric facts for this provider"
    return f"none of the provider's {len(facts)} current fabric facts states {subject}"


# Reads one fact for one question: its answer and what it states, or None if it is silent.
FactReading = Callable[[_Fact], tuple[AnswerValue, str] | None]


def _best_fact(facts: Sequence[_Fact], read: FactReading, subject: str) -> _Decision:
    """The most a provider's facts state (yes > partial > no) and the best fact saying it."""
    readings = [(fact, *reading) for fact in facts if (reading := read(fact)) is not None]
    if not readings:
        return _Decision(AnswerValue.UNKNOWN, _no_facts(facts, subject))
    top = max((value for _, value, _ in readings), key=_RANK.__getitem__)
    at_top = sorted(
        ((fact, stated) for fact, value, stated in readings if value is top),
        key=lambda pair: _fact_preference(pair[0]),
    )
    fact, stated = at_top[0]
    if top is AnswerValue.YES and not fact.trusted:
        return _third_party_only(fact, stated, subject)
    if top is AnswerValue.YES:
        reason = (
            f"{subject} stated in {len(at_top)} of {len(facts)} fabric facts, "
            f"e.g. {fact.instance_type}: {stated}"
        )
    else:
        reason = f"{fact.instance_type}: {stated}; no fabric fact states more"
    return _Decision(top, reason, (fact.evidence_for(stated),))


def _third_party_only(fact: _Fact, stated: str, subject: str) -> _Decision:
    """A "yes" that only third-party sources give is partial until the provider says it."""
    return _Decision(
        AnswerValue.PARTIAL,
        f"{subject} stated only by third-party sources (e.g. {fact.instance_type}: {stated}, "
        f"{fact.source_url}): partial until the provider's own documentation or an "
        "independent measurement states it",
        (fact.evidence_for(stated),),
    )


def _fabric_type(data: _ProviderData) -> _Decision:
    facts = data.facts
    stated = [f for f in facts if f.fabric_class != "unknown"]
    if not stated:
        return _Decision(AnswerValue.UNKNOWN, _no_facts(facts, "a fabric class"))
    lines = sorted({f.instance_type for f in facts})
    unstated = sorted(set(lines) - {f.instance_type for f in stated})
    classes = sorted({f.fabric_class for f in stated})
    multi_node = [f for f in stated if f.fabric_class != "none"]
    best = min(multi_node or stated, key=_fact_preference)
    stated_text = best.fabric_class + (f" ({best.fabric_product})" if best.fabric_product else "")
    evidence = (best.evidence_for(stated_text),)
    if not multi_node:
        return _Decision(
            AnswerValue.NO, "every stated fabric is 'none' (single node only)", evidence
        )
    if not best.trusted:
        return _third_party_only(best, stated_text, "a fabric class")
    if not unstated:
        return _Decision(
            AnswerValue.YES,
            f"class stated for all {len(lines)} product lines: {', '.join(classes)}",
            evidence,
        )
    return _Decision(
        AnswerValue.PARTIAL,
        f"class stated for {len(lines) - len(unstated)} of {len(lines)} product lines "
        f"({', '.join(classes)}); not for: {'; '.join(unstated)}",
        evidence,
    )


def _read_bandwidth(fact: _Fact) -> tuple[AnswerValue, str] | None:
    parts = []
    if fact.gbps_per_gpu is not None:
        parts.append(f"{fact.gbps_per_gpu:g} Gb/s per GPU")
    if fact.gbps_per_node is not None:
        parts.append(f"{fact.gbps_per_node:g} Gb/s per node")
    return (AnswerValue.YES, ", ".join(parts)) if parts else None


def _read_rdma(fact: _Fact) -> tuple[AnswerValue, str] | None:
    rdma, gdr = fact.rdma, fact.gpudirect_rdma
    if rdma is None and gdr is None:
        return None
    text = (
        f"RDMA {'not stated' if rdma is None else str(rdma).lower()}, "
        f"GPUDirect RDMA {'not stated' if gdr is None else str(gdr).lower()}"
    )
    if rdma and gdr:
        return AnswerValue.YES, text
    if rdma or gdr:
        return AnswerValue.PARTIAL, text
    return AnswerValue.NO, text  # at least one stated false, neither true


def _read_topology(fact: _Fact) -> tuple[AnswerValue, str] | None:
    return (AnswerValue.YES, fact.topology) if fact.topology else None


def _read_cluster_size(fact: _Fact) -> tuple[AnswerValue, str] | None:
    if fact.max_cluster_gpus is None:
        return None
    return AnswerValue.YES, f"up to {fact.max_cluster_gpus} GPUs"


def _read_benchmark(fact: _Fact) -> tuple[AnswerValue, str] | None:
    return (AnswerValue.YES, fact.benchmark_url) if fact.benchmark_url else None


def _fact_rule(read: FactReading, subject: str) -> Rule:
    return lambda data: _best_fact(data.facts, read, subject)


# -------------------------------------------------------------------- price rules

# The provider's own endpoint, then its page, then hand entry, then someone else's catalog.
_OBTAINED_PREFERENCE: Mapping[str, int] = {"api": 0, "scraped": 1, "curated": 2, "catalog": 3}
_OWN_PRICE_LIST = frozenset({"api", "scraped"})
_SPOT = "spot"
_RESERVED_PREFIX = "reserved_"


def _price_lists(rows: Iterable[_PriceRow]) -> list[list[_PriceRow]]:
    """Rows grouped by (source, obtained_by), best list first."""
    groups: dict[tuple[str, str], list[_PriceRow]] = {}
    for row in rows:
        groups.setdefault((row.source, row.obtained_by), []).append(row)

    def preference(rows: list[_PriceRow]) -> tuple[int, float, str]:
        newest = max(r.observed_at for r in rows)
        return (
            _OBTAINED_PREFERENCE.get(rows[0].obtained_by, 9),
            -newest.timestamp(),
            rows[0].source,
        )

    return sorted(groups.values(), key=preference)


def _price_evidence(rows: Sequence[_PriceRow], stated: str) -> Evidence:
    """A generated description of one price list's rows, citing its newest row."""
    example = min(
        rows,
        key=lambda r: (-r.observed_at.timestamp(), r.instance_type, r.region or "", r.pricing_tier),
    )
    tiers = ", ".join(sorted({r.pricing_tier for r in rows}))
    where = f" in {example.region}" if example.region else ""
    quote = (
        f"{len(rows)} current offer(s) from source '{example.source}' "
        f"(obtained by {example.obtained_by}; tiers: {tiers}), "
        f"e.g. {example.instance_type}{where}: "
        f"{example.price:g} {example.currency} per hour, {example.price_basis}, "
        f"{example.pricing_tier}"
    )
    return Evidence(
        quote=quote,
        source_url=example.source_url,
        observed_at=example.observed_at,
        obtained_by=example.obtained_by,
        # a provider's own price API or page is its own word; a catalog is a third party's
        source_grade="provider" if example.obtained_by in _OWN_PRICE_LIST else "third_party",
        source=example.source,
        stated=stated,
    )


def _public_prices(data: _ProviderData) -> _Decision:
    lists = _price_lists(data.prices)
    if not lists:
        return _Decision(AnswerValue.UNKNOWN, "no current offers for this provider")
    best = lists[0]
    obtained = best[0].obtained_by
    own = obtained in _OWN_PRICE_LIST
    how = {
        "api": "the provider's own price API",
        "scraped": "the provider's own pricing page",
        "curated": "prices typed in by hand from a cited page",
        "catalog": "a third party's catalog only",
    }.get(obtained, f"obtained by {obtained}")
    value = AnswerValue.YES if own else AnswerValue.PARTIAL
    reason = f"{how} (source '{best[0].source}'); {len(lists)} price source(s) in all"
    return _Decision(value, reason, (_price_evidence(best, how),))


def _tier_evidence(rows: Sequence[_PriceRow], keep: Callable[[str], bool], what: str) -> Evidence:
    best = _price_lists(r for r in rows if keep(r.pricing_tier))[0]
    return _price_evidence(best, what)


def _pricing_terms(data: _ProviderData) -> _Decision:
    if not data.prices:
        return _Decision(AnswerValue.UNKNOWN, "no current offers for this provider")
    tiers = {r.pricing_tier for r in data.prices}
    has_spot = _SPOT in tiers
    reserved = sorted(t for t in tiers if t.startswith(_RESERVED_PREFIX))
    evidence: list[Evidence] = []
    if has_spot:
        evidence.append(_tier_evidence(data.prices, lambda t: t == _SPOT, "spot prices"))
    if reserved:
        evidence.append(
            _tier_evidence(
                data.prices,
                lambda t: t.startswith(_RESERVED_PREFIX),
                f"reserved prices ({', '.join(reserved)})",
            )
        )
    if has_spot and reserved:
        return _Decision(
            AnswerValue.YES, f"spot and reserved ({', '.join(reserved)}) prices", tuple(evidence)
        )
    if evidence:
        missing = "reserved" if has_spot else "spot"
        return _Decision(
            AnswerValue.PARTIAL,
            f"{evidence[0].stated}; no {missing} price observed",
            tuple(evidence),
        )
    sources = ", ".join(lst[0].source for lst in _price_lists(data.prices))
    return _Decision(
        AnswerValue.UNKNOWN,
        f"the current offers ({sources}) show {', '.join(sorted(tiers))} prices only; "
        "no spot or reserved price was observed (not a statement that there is none)",
    )


# One rule per question id; the questionnaire may use any subset.
RULES: Mapping[str, Rule] = {
    "fabric_type": _fabric_type,
    "bandwidth": _fact_rule(_read_bandwidth, "scale-out bandwidth"),
    "rdma": _fact_rule(_read_rdma, "RDMA or GPUDirect RDMA"),
    "topology": _fact_rule(_read_topology, "a topology"),
    "cluster_size": _fact_rule(_read_cluster_size, "the largest cluster"),
    "multi_node_benchmarks": _fact_rule(_read_benchmark, "a published benchmark"),
    "public_prices": _public_prices,
    "pricing_terms": _pricing_terms,
}


# ------------------------------------------------------------------------------ API


def answers(
    source: TransparencyInputs | Path | str | duckdb.DuckDBPyConnection,
    questionnaire: Questionnaire | None = None,
) -> list[Answer]:
    """Every question answered for every provider with current offers or fabric facts.

    ``source`` is a warehouse path (read once, read-only), an open DuckDB connection, or
    ``TransparencyInputs``. Answers come ordered by provider, then questionnaire order.
    """
    questionnaire = questionnaire or load_questionnaire()
    unanswerable = [q.id for q in questionnaire.questions if q.id not in RULES]
    if unanswerable:
        raise TransparencyError(f"no answering rule for question(s) {', '.join(unanswerable)}")
    inputs = _as_inputs(source)
    facts: dict[str, list[_Fact]] = {}
    for row in _records(inputs.facts, FACT_COLUMNS, "fabric fact"):
        facts.setdefault(str(row["provider"]), []).append(_Fact.from_record(row))
    prices: dict[str, list[_PriceRow]] = {}
    for row in _records(inputs.offers, PRICE_EVIDENCE_COLUMNS, "offer"):
        prices.setdefault(str(row["provider"]), []).append(_PriceRow.from_record(row))
    names: dict[str, str] = {}
    if inputs.providers is not None:
        for row in _records(inputs.providers, PROVIDER_COLUMNS, "provider"):
            names[str(row["provider"])] = str(row["display_name"] or row["provider"])

    replies: dict[tuple[str, str], dict[str, Any]] = {}
    if inputs.rfi is not None:
        for row in _records(inputs.rfi, RFI_COLUMNS, "provider's answer"):
            replies[(str(row["provider"]), str(row["question_id"]))] = row

    result: list[Answer] = []
    asked = {q.id for q in questionnaire.questions}  # replies to other RFI items: not scored
    replied = {p for p, question in replies if question in asked}
    for provider in sorted(facts.keys() | prices.keys() | replied):
        data = _ProviderData(tuple(facts.get(provider, ())), tuple(prices.get(provider, ())))
        for question in questionnaire.questions:
            decision = RULES[question.id](data)
            reply = replies.get((provider, question.id))
            if reply is not None:
                decision = _replied(reply, decision)
            result.append(
                Answer(
                    provider=provider,
                    provider_name=names.get(provider, provider),
                    question_id=question.id,
                    value=decision.value,
                    reason=decision.reason,
                    evidence=decision.evidence,
                    questionnaire_version=questionnaire.version,
                    snapshot_id=inputs.snapshot_id,
                )
            )
    return result


RFI_SOURCE = "rfi"  # an answer's evidence from the provider's own reply (Evidence.source)


def _replied(reply: Mapping[str, Any], published: _Decision) -> _Decision:
    """The provider's own answer decides: it is provider-grade and dated the day given. What
    the published facts say stays as the evidence after it."""
    value = AnswerValue(str(reply["value"]))
    when = _as_date(reply["answered_on"])
    url = reply.get("evidence_url")
    attachment = reply.get("attachment")
    if url:
        link = str(url)
    elif attachment:
        link = "attachment://" + quote_url(str(attachment))
    else:
        link = f"rfi://{reply['provider']}/{reply['question_id']}"
    evidence = Evidence(
        quote=str(reply["answer"]),
        source_url=link,
        observed_at=_as_datetime(reply["entered_at"]),
        source_date=when,
        obtained_by=RFI_SOURCE,
        source_grade="provider",
        source=RFI_SOURCE,
        stated=f"answered {value.value}",
    )
    said = (
        f"answered {value.value} by {reply['answered_by']} on {when} in reply to the "
        f"questionnaire; the published facts say: {published.value.value}"
    )
    return _Decision(value, said, (evidence, *published.evidence))


def replied_by_provider(answer: Answer) -> bool:
    """Whether ``answer`` is the provider's own reply to the questionnaire."""
    return bool(answer.evidence) and answer.evidence[0].source == RFI_SOURCE


def _check_version(answers: Sequence[Answer], questionnaire: Questionnaire) -> None:
    versions = {a.questionnaire_version for a in answers}
    if versions - {questionnaire.version}:
        raise TransparencyError(
            f"answers are for questionnaire version(s) {', '.join(sorted(versions))}, "
            f"not {questionnaire.version}: answer again with the same questionnaire"
        )


def _by_provider(answers: Iterable[Answer]) -> dict[str, dict[str, Answer]]:
    grouped: dict[str, dict[str, Answer]] = {}
    for answer in answers:
        grouped.setdefault(answer.provider, {})[answer.question_id] = answer
    return grouped


def scores(
    answers: Sequence[Answer], questionnaire: Questionnaire | None = None
) -> dict[str, ProviderScore]:
    """Per provider: ``sum(weight x credit) / sum(weights)``; a missing answer counts unknown."""
    questionnaire = questionnaire or load_questionnaire()
    _check_version(answers, questionnaire)
    result: dict[str, ProviderScore] = {}
    for provider, given in sorted(_by_provider(answers).items()):
        values = {
            q.id: given[q.id].value if q.id in given else AnswerValue.UNKNOWN
            for q in questionnaire.questions
        }
        earned = math.fsum(q.weight * CREDIT[values[q.id]] for q in questionnaire.questions)
        counts = {value: sum(v is value for v in values.values()) for value in AnswerValue}
        any_answer = next(iter(given.values()))
        result[provider] = ProviderScore(
            provider=provider,
            provider_name=any_answer.provider_name,
            score=min(1.0, earned / questionnaire.total_weight),
            answered=len(values) - counts[AnswerValue.UNKNOWN],
            yes=counts[AnswerValue.YES],
            partial=counts[AnswerValue.PARTIAL],
            no=counts[AnswerValue.NO],
            unknown=counts[AnswerValue.UNKNOWN],
            open_question_ids=tuple(q for q, v in values.items() if v is not AnswerValue.YES),
            questionnaire_version=questionnaire.version,
            snapshot_id=any_answer.snapshot_id,
        )
    return result


def open_questions(
    answers: Sequence[Answer], provider: str, questionnaire: Questionnaire | None = None
) -> list[Question]:
    """The questions ``provider`` has not answered ``yes``, in questionnaire order: its RFI."""
    questionnaire = questionnaire or load_questionnaire()
    _check_version(answers, questionnaire)
    grouped = _by_provider(answers)
    if provider not in grouped:
        known = ", ".join(sorted(grouped)) or "none"
        raise TransparencyError(f"no answers for provider {provider!r}; answered: {known}")
    given = grouped[provider]
    return [
        q
        for q in questionnaire.questions
        if q.id not in given or given[q.id].value is not AnswerValue.YES
    ]
