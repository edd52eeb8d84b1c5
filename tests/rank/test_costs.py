"""The whole cost of a job: the commitment a price needs, storage, egress and support, each
from the provider's stated price or the user's, unknown where nobody states it; the ranking
sorts by it."""

from __future__ import annotations

from datetime import date

import pandas as pd
import pytest

from fabricscope.model.workload import Workload
from fabricscope.model.workloads import preset
from fabricscope.rank.costs import (
    CHECKPOINT_BYTES_PER_PARAM,
    HOURS_PER_MONTH,
    WEIGHTS_BYTES_PER_PARAM,
    CostInputs,
    commitment,
)
from fabricscope.rank.ranking import RankRequest, rank, rank_offers
from fabricscope.warehouse.models import PricingTier
from tests.helpers import AS_OF
from tests.rank.test_ranking import synthetic_offer

# Llama 3 8B on 200B tokens: about two weeks on 64 H100s
JOB = Workload.model_validate({**preset("llama3-8b").model_dump(), "tokens": 2e11})


def request(**extra) -> RankRequest:
    tiers = extra.pop("tiers", (PricingTier.ON_DEMAND, PricingTier.RESERVED_1Y))
    return RankRequest(workload=JOB, gpu_counts=(64,), tiers=tiers, **extra)


def offers(*rows: dict) -> pd.DataFrame:
    return pd.DataFrame(list(rows))


def test_a_short_job_on_a_one_year_term_costs_the_year():
    frame = offers(
        synthetic_offer("flex", "infiniband", 2.40),
        synthetic_offer("year", "infiniband", 1.60, pricing_tier="reserved_1y"),
    )
    rows = rank_offers(frame, request()).offers.set_index("provider")
    year = rows.loc["year"]
    assert year["time_to_train_h"] < 30 * 24  # a job of days, not a year
    billed = 12 * HOURS_PER_MONTH * 64 * 1.60
    assert year["gpu_cost_usd"] == pytest.approx(billed)
    assert year["commitment_usd"] == pytest.approx(billed - year["cost_usd"])
    assert year["total_cost_usd"] >= billed
    assert "commitment: a 12-month term paid in full" in year["notes"]
    assert "billed at least 8,760 hours" in year["cost_basis"]
    flex = rows.loc["flex"]
    assert flex["commitment_usd"] == 0 and flex["gpu_cost_usd"] == pytest.approx(flex["cost_usd"])
    # cheaper per hour, dearer in all: the ranking sorts by the whole cost
    assert year["price_usd_per_gpu_hour"] < flex["price_usd_per_gpu_hour"]
    assert flex["rank"] < year["rank"]
    # a budget counts the whole cost too
    tight = rank_offers(frame, request(max_budget_usd=flex["total_cost_usd"] * 1.01))
    reason = tight.excluded.set_index("provider").loc["year", "reason"]
    assert "in all, over the" in reason


def test_a_quotes_minimum_gpus_months_and_booking_raise_what_is_billed():
    quoted = {
        "quote_id": "q-1",
        "quote_min_commit_gpus": 128,
        "quote_min_commit_months": 1.0,
        "quote_booked_from": date(2027, 1, 1),
        "quote_booked_to": date(2027, 1, 2),  # two days: shorter than the run
    }
    hours, gpus, why = commitment({"pricing_tier": "on_demand", **quoted})
    assert (hours, gpus) == (HOURS_PER_MONTH, 128)
    assert why == (
        "a 1-month minimum rental; booked 2027-01-01 to 2027-01-02 (2 days), paid whole; "
        "at least 128 GPUs"
    )
    row = rank_offers(offers(synthetic_offer("q", "infiniband", 2.0, **quoted)), request()).offers
    row = row.iloc[0]
    assert row["gpu_cost_usd"] == pytest.approx(
        max(row["time_to_train_h"], HOURS_PER_MONTH) * 128 * 2.0
    )
    assert "does not fit the booking (2027-01-01 to 2027-01-02)" in row["notes"]


def test_storage_and_egress_come_from_the_providers_stated_price_or_stay_unknown():
    stated = synthetic_offer(
        "stated",
        "infiniband",
        2.0,
        cost_storage_usd_per_tb_month=65.0,
        cost_egress_usd_per_gb=0.0,
    )
    silent = synthetic_offer("silent", "infiniband", 2.0)
    job = CostInputs(dataset_tb=10.0, checkpoints_kept=3)
    rows = rank_offers(offers(stated, silent), request(costs=job)).offers.set_index("provider")
    checkpoint_tb = CHECKPOINT_BYTES_PER_PARAM * JOB.trainable_params / 1e12
    stored_tb = 3 * checkpoint_tb + 10.0
    known = rows.loc["stated"]
    months = known["time_to_train_h"] / HOURS_PER_MONTH
    assert known["storage_usd"] == pytest.approx(stored_tb * months * 65.0)
    assert known["egress_usd"] == 0.0  # a stated zero is a zero
    assert pd.isna(known["costs_unknown"])
    assert known["total_cost_usd"] == pytest.approx(known["cost_usd"] + known["storage_usd"])
    unknown = rows.loc["silent"]
    assert pd.isna(unknown["storage_usd"]) and pd.isna(unknown["egress_usd"])
    assert unknown["costs_unknown"] == "storage, egress"
    assert unknown["total_cost_usd"] == pytest.approx(unknown["cost_usd"])  # never a guess
    assert "price unknown" in unknown["cost_basis"]
    # the user's prices apply to every provider; support only when asked for
    mine = CostInputs(storage_usd_per_tb_month=20.0, egress_usd_per_gb=0.05, support_pct=10)
    rows = rank_offers(offers(stated, silent), request(costs=mine)).offers.set_index("provider")
    silent_row = rows.loc["silent"]
    weights_tb = WEIGHTS_BYTES_PER_PARAM * JOB.trainable_params / 1e12
    assert silent_row["egress_usd"] == pytest.approx(weights_tb * 1000 * 0.05)
    assert silent_row["support_usd"] == pytest.approx(0.10 * silent_row["gpu_cost_usd"])
    assert pd.isna(silent_row["costs_unknown"])
    asked = CostInputs(include_stated_support=True)
    rows = rank_offers(offers(silent), request(costs=asked)).offers
    assert rows.iloc[0]["costs_unknown"] == "support, storage, egress"


def test_the_recordings_warehouse_prices_storage_where_providers_state_it(fixture_warehouse):
    result = rank(
        fixture_warehouse,
        RankRequest(workload=preset("llama3-70b"), gpu_counts=(512,)),
        AS_OF,
    )
    rows = result.offers
    assert (rows["total_cost_usd"] >= rows["cost_usd"] - 1e-6).all()
    priced = rows[rows["storage_usd"].notna()]
    assert {"coreweave", "lambda"} & set(priced["provider"])
    assert rows.loc[rows["storage_usd"].isna(), "costs_unknown"].str.contains("storage").all()
    scores = rows["score"].tolist()
    assert scores == sorted(scores)  # ordered by the whole cost (the cost objective)
    assert rows["score"].tolist() == pytest.approx(
        (rows["total_cost_usd"] / rows["total_cost_usd"].min()).tolist()
    )
