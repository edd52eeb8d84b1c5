"""Materialised rankings: the preset workloads ranked after every refresh, stored whole, and
served back to the same request instead of ranking it again.

After each refresh (and on the schedule) every ranking in ``presets/rankings.json`` is ranked
over the new offers and published as one snapshot of kind ``estimates``: the ranked rows
(``estimates``, which analysts query through ``estimates_current``), one row per ranking
(``estimate_rankings``: its exact request and the code that ranked it) and the offers each
left out with the reason (``estimate_exclusions``).

``materialised_result`` serves a stored ranking as the RankResult ``ranking.rank`` would
return, but only when that is the same answer: the same request (its JSON, byte for byte),
ranked by the same code and reference files (``ranking_version``), over the snapshot that is
still current, with nothing published between the offers it read and the estimates. Prices'
ages are measured again at the time asked. Anything else (a custom workload, a changed
control, a newer run or calibration, an upgraded model) returns None and is ranked live.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import duckdb
import pandas as pd
from pydantic import BaseModel, ConfigDict

from fabricscope.rank.estimators import estimator_for
from fabricscope.rank.ranking import (
    EXCLUDED_COLUMNS,
    Objective,
    RankInputs,
    RankRequest,
    RankResult,
    _age_days,
    _providers,
    as_stored_types,
    parse_gpu_counts,
    rank,
    ranked_columns,
    read_inputs,
)
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import SnapshotInfo, read_connection
from fabricscope.warehouse.models import PricingTier

ROOT = Path(__file__).resolve().parents[2]
RANKINGS_FILE = Path(__file__).resolve().parent / "rankings.json"
# what decides a ranking besides the warehouse: the code and the reference files it reads (the
# model and its presets, the ranking, the evidence it scores, the GPU and fabric reference CSVs)
_RANKING_SOURCES = (
    "fabricscope/model/**/*",
    "fabricscope/rank/**/*",
    "fabricscope/evidence/**/*",
    "fabricscope/config.py",
    "fabricscope/files.py",
    "fabricscope/frames.py",
    "fabricscope/warehouse/gpus.py",
    "fabricscope/warehouse/reference/*.csv",
)
# columns a stored row does not keep: set again when served
_SERVED_COLUMNS = ("snapshot_id", "data_age_days")


class MaterialisedRanking(BaseModel):
    """One preset workload ranked after every refresh (fabricscope/rank/rankings.json)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    preset: str
    gpus: str
    tier: PricingTier = PricingTier.ON_DEMAND
    objective: Objective = "cost"
    serve: bool = False  # a serving preset (presets/serving.json), not a training one

    def request(self) -> RankRequest:
        from fabricscope.model.workloads import load_serving_workload, preset

        return RankRequest(
            workload=load_serving_workload(self.preset) if self.serve else preset(self.preset),
            gpu_counts=parse_gpu_counts(self.gpus),
            tiers=(self.tier,),
            objective=self.objective,
        )


def materialised_rankings(path: Path = RANKINGS_FILE) -> list[MaterialisedRanking]:
    return [MaterialisedRanking(**item) for item in json.loads(path.read_text(encoding="utf-8"))]


@cache
def ranking_version() -> str:
    """A fingerprint of the code and reference files that rank (sha256 of their paths and
    bytes): a ranking stored by other code is never served as this code's answer."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in _RANKING_SOURCES for p in ROOT.glob(pattern) if p.is_file()})
    for path in files:
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(ROOT).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Materialised:
    """What one materialisation publishes: ranked rows, rankings and exclusions."""

    rows: pd.DataFrame
    rankings: pd.DataFrame
    exclusions: pd.DataFrame
    serving_rows: pd.DataFrame  # the serving rankings' ranked offers (serving_estimates)


def materialised(inputs: RankInputs, now: datetime | None = None) -> Materialised:
    """Every ranking in rankings.json over ``inputs``, shaped as the three tables."""
    computed_at = now or datetime.now(UTC)
    version = ranking_version()
    rows: list[pd.DataFrame] = []
    serving: list[pd.DataFrame] = []
    rankings, exclusions = [], []
    for item in materialised_rankings():
        request = item.request()
        request_json = request.model_dump_json()
        result = rank(inputs, request, computed_at)
        rankings.append(
            {
                "based_on_snapshot": inputs.snapshot.snapshot_id,
                "computed_at": computed_at,
                "workload": item.preset,
                "gpus_requested": item.gpus,
                "pricing_tier": item.tier.value,
                "objective": item.objective,
                "request_json": request_json,
                "ranking_version": version,
                "offers": len(result.offers),
                "excluded": len(result.excluded),
                "profiles_estimated": result.profiles_estimated,
            }
        )
        excluded = result.excluded.copy()
        excluded["request_json"] = request_json
        exclusions.append(excluded)
        if result.offers.empty:
            continue
        frame = result.offers.drop(columns=list(_SERVED_COLUMNS))
        frame["workload"] = item.preset
        frame["workload_name"] = request.workload.name
        frame["gpus_requested"] = item.gpus
        frame["objective"] = item.objective
        frame["request_json"] = request_json
        frame["based_on_snapshot"] = inputs.snapshot.snapshot_id
        frame["computed_at"] = computed_at
        (serving if item.serve else rows).append(frame)
    return Materialised(
        rows=pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(),
        serving_rows=pd.concat(serving, ignore_index=True) if serving else pd.DataFrame(),
        rankings=pd.DataFrame(rankings),
        exclusions=pd.concat(exclusions, ignore_index=True) if exclusions else pd.DataFrame(),
    )


def materialise(warehouse: Path, lock_wait_s: float = 0.0) -> tuple[int, SnapshotInfo | None]:
    """Rank every preset in rankings.json and publish the rows as one snapshot."""
    from fabricscope.warehouse.load import publish_estimates

    made = materialised(read_inputs(warehouse))
    if made.rankings.empty:
        return 0, None
    result = publish_estimates(
        warehouse, made.rows, lock_wait_s, made.rankings, made.exclusions, made.serving_rows
    )
    return len(made.rows) + len(made.serving_rows), result.snapshot


def materialised_result(
    warehouse: Path, inputs: RankInputs, request: RankRequest, now: datetime | None = None
) -> RankResult | None:
    """The stored ranking of ``request`` over ``inputs``' snapshot as ``rank`` returns it,
    prices aged at ``now`` (default: the clock); None when none is stored for exactly this
    request, by this code, over this very snapshot (then rank it live)."""
    if request.max_price_age_days is not None:
        return None  # which offers pass the age limit moves with the clock
    request_json = request.model_dump_json()
    snapshot_id = inputs.snapshot.snapshot_id
    try:
        with read_connection(warehouse) as (con, snapshot):
            if snapshot.snapshot_id != snapshot_id:
                return None
            found = con.execute(reads.sql("stored_ranking"), [snapshot_id, request_json]).fetchall()
            if not found:
                return None
            based_on, profiles, version, computed_at = found[0]
            # the offers ranked are the current ones only if nothing was published between
            if based_on != snapshot_id - 1 or version != ranking_version():
                return None
            key = [snapshot_id, request_json]
            if request.workload.kind == "serving":
                rows = con.execute(reads.sql("stored_serving_rows"), key).df()
            else:
                rows = con.execute(reads.sql("stored_ranking_rows"), key).df()
            excluded = con.execute(reads.sql("stored_ranking_exclusions"), key).df()
    except duckdb.CatalogException:
        return None  # a warehouse from before 0006: nothing served until the next refresh
    now = now or datetime.now(UTC)
    estimator = estimator_for(request.workload)
    offers = as_stored_types(rows.reindex(columns=list(estimator.columns)))
    # what is not stored (a training row's error band) follows the shipped data
    offers = estimator.annotate(offers, request.workload).reindex(columns=ranked_columns(estimator))
    offers["snapshot_id"] = snapshot_id
    offers["data_age_days"] = [_age_days(now, seen) for seen in offers["price_observed_at"]]
    offers["multi_node"] = [None if pd.isna(v) else bool(v) for v in offers["multi_node"]]
    excluded = excluded.reindex(columns=EXCLUDED_COLUMNS)
    excluded["gpus"] = excluded["gpus"].astype("Int64")
    return RankResult(
        inputs.snapshot,
        request,
        offers,
        excluded,
        _providers(offers, estimator),
        catalog=inputs.catalog,
        calibrations=dict(inputs.calibrations),
        answers=inputs.answers,
        replies=inputs.replies,
        profiles_estimated=int(profiles),
        as_of=now,
        stored_at=computed_at.astimezone(UTC),
    )
