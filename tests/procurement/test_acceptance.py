"""Acceptance tests and contract terms: asked in the RFI template, set per offer in the memo
with the offer's threshold, and passed or failed against a measured all-reduce."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from fabricscope.evidence import transparency
from fabricscope.evidence.calibrate import fit_upload, store
from fabricscope.model.workloads import preset
from fabricscope.procurement import acceptance, rfi, shortlist
from fabricscope.rank.ranking import RankRequest, rank, rank_offers
from tests.helpers import AS_OF, ROOT
from tests.rank.test_ranking import synthetic_offer

IB_RUN = ROOT / "fixtures" / "nccl_tests" / "infiniband_2n_16g_all_reduce.txt"


def test_the_checklist_is_cited_and_its_ids_are_new():
    items = acceptance.checklist()
    questions = {q.id for q in transparency.load_questionnaire().questions}
    assert len(set(items.ids)) == len(items.ids) and not set(items.ids) & questions
    assert all(len(t.source) > 20 for t in items.tests)
    assert all(len(t.source) > 20 and t.question.endswith("?") for t in items.terms)


def test_the_expected_all_reduce_follows_the_fabric_class():
    # InfiniBand: efficiency 0.9 up to its 64-node knee (fabric_classes.csv)
    assert acceptance.expected_all_reduce_busbw("infiniband", 400, 8, 2) == pytest.approx(360)
    far = acceptance.expected_all_reduce_busbw("infiniband", 400, 8, 256)
    assert far == pytest.approx(360 * (1 - 0.005 * 2))  # two doublings past the knee
    assert acceptance.expected_all_reduce_busbw(None, 400, 8, 2) is None
    assert acceptance.expected_all_reduce_busbw("infiniband", None, 8, 2) is None
    assert acceptance.expected_all_reduce_busbw("infiniband", 400, 8, 1) is None


def calibration(busbw: float, nodes: int = 2) -> dict:
    return {
        "calibration_id": "ib-test",
        "busbw_gbytes_s": busbw,
        "alpha_us": None,
        "n_ranks": nodes * 8,
        "n_nodes": nodes,
        "file_name": "ib.txt",
        "uploaded_at": datetime(2026, 12, 1, tzinfo=UTC),
    }


@pytest.mark.parametrize(
    ("busbw", "status"), [(330.0, "pass"), (323.0, "fail"), (None, "not measured")]
)
def test_a_measured_all_reduce_passes_or_fails_against_the_offers_threshold(busbw, status):
    offers = pd.DataFrame([synthetic_offer("ib", "infiniband", 2.5)])
    request = RankRequest(workload=preset("llama3-70b"), gpu_counts=(512,))
    measured = {("ib", "infiniband"): calibration(busbw)} if busbw else {}
    result = rank_offers(offers, request, calibrations=measured)
    row = result.offers.iloc[0]
    (all_reduce,) = [
        v
        for v in acceptance.verdicts(row, result.calibrations, moe=False)
        if v.test.id == "nccl_all_reduce"
    ]
    assert all_reduce.status == status
    assert all_reduce.threshold.startswith("at least 324 GB/s bus bandwidth on 64 nodes")
    memo = shortlist.memo(shortlist.from_result(result, top=1))
    assert "## Before you accept the cluster" in memo
    assert f"**{status}**" in memo
    if busbw:
        # 90% of the 360 GB/s InfiniBand carries on 2 nodes is 324 GB/s
        assert f"measured {busbw:,.0f} GB/s on 2 nodes against 324 GB/s there" in memo
    if status == "pass":
        assert "the job runs on 64 nodes: test again at that count" in memo
    assert "## Contract terms that cost money" in memo


def test_an_offer_without_a_stated_fabric_gets_no_threshold_and_moe_adds_all_to_all():
    offers = pd.DataFrame([synthetic_offer("mystery", None, 2.5)])
    result = rank_offers(offers, RankRequest(workload=preset("mixtral-8x7b"), gpu_counts=(256,)))
    given = acceptance.verdicts(result.offers.iloc[0], {}, moe=True)
    statuses = {v.test.id: v.status for v in given}
    assert statuses["nccl_all_reduce"] == "cannot be set"
    assert statuses["nccl_all_to_all"] == "ask"
    one_node = rank_offers(offers, RankRequest(workload=preset("llama3-8b"), gpu_counts=(8,)))
    assert [v.test.id for v in acceptance.verdicts(one_node.offers.iloc[0], {}, moe=False)] == [
        "burn_in"
    ]


def test_a_stored_nccl_tests_run_and_a_reply_on_terms_reach_the_memo(
    fixture_warehouse, tmp_path: Path
):
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, warehouse)
    request = RankRequest(workload=preset("llama3-70b"), gpu_counts=(512,))
    before = rank(warehouse, request, AS_OF)
    stated = before.offers[
        (before.offers["fabric_class"] == "infiniband") & ~before.offers["fabric_range"]
    ].iloc[0]
    provider = str(stated["provider"])
    text = IB_RUN.read_text(encoding="utf-8")
    fitted = fit_upload(text, provider, "infiniband", n_nodes=2)
    store(warehouse, fitted, text, IB_RUN.name, "acceptance test run")
    rows = rfi.template_rows([provider], before.answers)
    ids = [r["question_id"] for r in rows]
    assert set(acceptance.checklist().ids) <= set(ids)
    reply = (
        "provider,question_id,value,answer,answered_on,answered_by,entered_by\n"
        f"{provider},sla_credit,partial,Credits must be claimed within 10 days.,2026-12-02,"
        "Legal,pat\n"
    )
    entered, refused = rfi.parse(reply.encode(), "terms.csv")
    assert not refused
    rfi.store(warehouse, entered, datetime(2026, 12, 3, tzinfo=UTC), "terms.csv")
    after = rank(warehouse, request, AS_OF)
    assert transparency.scores(after.answers)[provider] == (
        transparency.scores(before.answers)[provider].model_copy(
            update={"snapshot_id": after.snapshot.snapshot_id}
        )
    )  # a reply on terms is not a questionnaire answer: the score does not move
    chosen = shortlist.from_result(after, offer_keys=[stated["offer_key"]])
    memo = shortlist.memo(chosen)
    busbw = float(after.calibrations[(provider, "infiniband")]["busbw_gbytes_s"])
    assert f"measured {busbw:,.0f} GB/s on 2 nodes" in memo
    assert '"Credits must be claimed within 10 days."' in memo
    assert "answered on 2026-12-02 (Legal)" in memo
