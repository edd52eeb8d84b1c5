"""The estimator seam: the ranking takes a model of another kind of workload and keeps its
own exclusions, fabric ranges, budgets, Pareto front and providers' table unchanged.

The second estimator here is a made-up one (a fixed throughput per GPU, slowed by the
fabric's bandwidth), written against the ``Estimator`` protocol as a new model would be; it
stands for no component of ours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd
import pytest

from fabricscope.model.workload import Workload
from fabricscope.model.workloads import preset
from fabricscope.rank.estimators import (
    COST_COLUMNS,
    ESTIMATORS,
    FABRIC_COLUMNS,
    OFFER_COLUMNS,
    PRICE_COLUMNS,
    TAIL_COLUMNS,
    TRAINING,
    Estimator,
    estimator_for,
)
from fabricscope.rank.ranking import BAND_COLUMNS, RANKED_COLUMNS, RankRequest, rank_offers
from tests.rank.test_ranking import request, synthetic_offer


class BatchWorkload(Workload):
    """A workload of another kind: the same fields, another estimator."""

    kind: ClassVar[str] = "batch"


class BatchEstimator:
    """Tokens at 1,000 tokens/s per GPU, times 400 Gb/s over the fabric's Gb/s per GPU
    past one node; no plan on fewer than 16 GPUs."""

    kind: ClassVar[str] = "batch"
    columns: ClassVar[tuple[str, ...]] = (
        *OFFER_COLUMNS,
        "hours",
        "hours_low",
        "cost_usd",
        "cost_usd_low",
        "verdict",
        *COST_COLUMNS,
        *FABRIC_COLUMNS,
        *PRICE_COLUMNS,
        *TAIL_COLUMNS,
    )
    time: ClassVar[str] = "hours"
    time_low: ClassVar[str] = "hours_low"
    hours: ClassVar[str] = "hours"
    hours_low: ClassVar[str] = "hours_low"
    annotations: ClassVar[tuple[str, ...]] = ()
    provider_annotations: ClassVar[tuple[str, ...]] = ()

    def annotate(self, frame: Any, workload: Any) -> Any:
        return frame

    def worse(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        return bool(a["hours"] > b["hours"])

    def results(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[dict]:
        out = []
        for profile in profiles:
            gpus = int(profile["gpu_count"])
            multi = gpus > int(profile["gpus_per_node"])
            slowdown = 400.0 / float(profile["fabric_gbps_per_gpu"]) if multi else 1.0
            hours = workload.tokens / (1_000.0 * gpus) / 3600.0 * slowdown
            out.append({"hours": hours, "has_plan": gpus >= 16})
        return out

    def has_plan(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[bool]:
        return [r["has_plan"] for r in self.results(workload, profiles)]

    def row(
        self,
        workload: Any,
        candidate: Mapping[str, Any],
        slow: Mapping[str, Any],
        fast: Mapping[str, Any],
        rented_gpus: int,
    ) -> dict[str, Any]:
        price = float(candidate["price_usd_per_gpu_hour"])
        return {
            "hours": slow["hours"],
            "hours_low": fast["hours"],
            "cost_usd": slow["hours"] * rented_gpus * price,
            "cost_usd_low": fast["hours"] * rented_gpus * price,
            "verdict": "made up",
            "has_plan": slow["has_plan"],
            "notes": ["estimated by the batch estimator"],
        }

    def no_plan_reason(self, workload: Any, row: Mapping[str, Any]) -> str:
        near = " or ".join(str(n) for n in row["workable_gpus"])
        return f"fewer than 16 GPUs; it has a plan on {near} GPUs"


@pytest.fixture
def batch() -> Estimator:
    ESTIMATORS["batch"] = BatchEstimator()
    yield ESTIMATORS["batch"]
    del ESTIMATORS["batch"]


def batch_request(gpus: tuple[int, ...], **extra: Any) -> RankRequest:
    job = BatchWorkload(**preset("llama3-8b").model_dump())
    return RankRequest(workload=job, gpu_counts=gpus, **extra)


def test_a_training_workload_finds_the_training_estimator_and_its_columns():
    job = preset("llama3-70b")
    assert job.kind == "training" and "kind" not in job.model_dump()
    assert estimator_for(job) is TRAINING
    # the estimator's columns, and the error band the ranking adds after the cost
    assert [c for c in RANKED_COLUMNS if c not in BAND_COLUMNS] == list(TRAINING.columns)
    after = RANKED_COLUMNS.index("cost_usd_low") + 1
    assert tuple(RANKED_COLUMNS[after : after + len(BAND_COLUMNS)]) == BAND_COLUMNS
    result = rank_offers(
        pd.DataFrame([synthetic_offer("ib", "infiniband", 2.5)]), request("llama3-70b", "64")
    )
    assert result.estimator is TRAINING and list(result.offers.columns) == RANKED_COLUMNS


def test_a_kind_without_an_estimator_is_a_one_line_error():
    with pytest.raises(ValueError, match="no estimator for workload kind 'batch'; known: "):
        estimator_for(BatchWorkload(**preset("llama3-8b").model_dump()))


def test_another_estimator_ranks_with_the_rankings_own_exclusions_ranges_and_front(batch):
    offers = pd.DataFrame(
        [
            synthetic_offer("ib", "infiniband", 2.5),
            synthetic_offer("mystery", None, 2.0),
            synthetic_offer("market", None, 1.0, multi_node=False, multi_node_reason="a host"),
            synthetic_offer("dear", "infiniband", 9.0),
        ]
    )
    result = rank_offers(offers, batch_request((8, 64), max_budget_usd=1e9))
    assert result.estimator is batch
    assert list(result.offers.columns) == list(BatchEstimator.columns) == result.columns
    rows = result.offers.set_index("provider")
    # the ranking's own exclusion (the offer does not cluster) and the estimator's (no plan
    # on 8 GPUs, with the nearest counts the ranking found through has_plan)
    reasons = result.excluded.groupby("provider")["reason"].apply(list)
    assert any("does not cluster: a host" in r for r in reasons["market"])
    assert any(r.startswith("fewer than 16 GPUs; it has a plan on 16") for r in reasons["ib"])
    # the ranking's fabric range: an unstated fabric at both ends, ordered by the worse one
    mystery = rows.loc["mystery"]
    assert mystery["fabric_range"] and mystery["hours_low"] < mystery["hours"]
    assert mystery["hours"] == pytest.approx(mystery["hours_low"] * 400 / 4)  # 32 Gb/s / 8
    assert "estimated by the batch estimator" in mystery["notes"]
    assert "multi-node support not stated" in mystery["notes"]
    # the score (cost at the worse end: the unstated fabric's 100x slower end costs more
    # than a dearer stated one), the Pareto front and the providers' table
    assert list(rows.sort_values("rank").index) == ["ib", "dear", "mystery"]
    assert rows["pareto"].map(bool).to_dict() == {"ib": True, "mystery": False, "dear": False}
    assert {"hours", "hours_low"} <= set(result.providers.columns)
    assert result.providers["provider"].tolist() == ["ib", "dear", "mystery"]
    # the whole cost adds to the estimator's cost; a budget excludes on it at the better end
    assert (rows["total_cost_usd"] >= rows["cost_usd"]).all()
    tight = rank_offers(
        offers, batch_request((64,), max_budget_usd=rows.loc["ib", "total_cost_usd"])
    )
    assert "dear" in set(tight.excluded["provider"])
    assert "over the" in tight.excluded.set_index("provider").loc["dear", "reason"]
