"""Serving in the ranking (issue 36): the serving estimator behind the seam ranks offers by
the whole cost of the GPUs that carry a load at latency targets, and says when the fabric
matters (only when a replica spans nodes)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from pydantic import ValidationError

from fabricscope.model.serving import ServingWorkload
from fabricscope.model.workloads import WorkloadError, load_serving_workload, serving_presets
from fabricscope.rank.estimators import SERVING, estimator_for
from fabricscope.rank.ranking import RankRequest, rank_offers
from tests.rank.test_ranking import synthetic_offer

FABRICS = ("infiniband", "roce", "spectrum_x", "ethernet", None)


def serve(name: str, gpus: tuple[int, ...], **changes: object) -> RankRequest:
    job = load_serving_workload(name)
    if changes:
        job = ServingWorkload.model_validate({**job.model_dump(), **changes})
    return RankRequest(workload=job, gpu_counts=gpus)


def offers(*fabrics: str | None, price: float = 2.5, **extra: object) -> pd.DataFrame:
    return pd.DataFrame(
        [synthetic_offer(str(fabric), fabric, price, **extra) for fabric in fabrics]
    )


def test_every_serving_preset_loads_with_its_source():
    for name, entry in serving_presets().items():
        job = load_serving_workload(name)
        assert job.kind == "serving" and estimator_for(job) is SERVING
        assert entry["source"] and entry["description"]
        assert job.ttft_ms and job.tpot_ms and job.requests_per_s


def test_a_serving_request_reads_back_as_a_serving_request():
    request = serve("llama3-70b-chat", (8,))
    again = RankRequest.model_validate_json(request.model_dump_json())
    assert isinstance(again.workload, ServingWorkload) and again == request


def test_a_single_node_serving_ranking_is_the_same_on_every_fabric():
    result = rank_offers(offers(*FABRICS), serve("llama3-70b-chat", (8,)))
    rows = result.offers
    assert len(rows) == len(FABRICS)
    for column in ("tpot_ms", "ttft_ms", "usd_per_million_output_tokens", "total_cost_usd"):
        assert rows[column].nunique() == 1, column
    assert (rows["tpot_ms"] == rows["tpot_ms_low"]).all()  # no range: the fabric does not enter
    assert set(rows["verdict"]) == {"the fabric does not matter: fits one node"}


def test_a_model_larger_than_a_node_spans_two_and_reads_the_fabric():
    result = rank_offers(
        offers("infiniband", "ethernet"),
        serve("llama3-405b-bf16", (8, 16), requests_per_s=0.5),
    )
    rows = result.offers.set_index("provider")
    # 810 GB of bf16 weights do not fit 8 x 80 GB: two nodes, pipelined across the fabric
    assert (rows["gpus"] == 16).all()
    assert (rows["layout"].str.startswith("TP8 x PP2")).all()
    assert rows.loc["ethernet", "tpot_ms"] > rows.loc["infiniband", "tpot_ms"]
    assert rows.loc["ethernet", "verdict"].startswith("multi-node serving: the fabric costs")
    one_node = result.excluded[result.excluded["gpus"] == 8]
    assert len(one_node) == 2
    assert one_node["reason"].str.contains("810 GB of weights").all()
    assert one_node["reason"].str.contains("it has a plan on 16").all()


def test_the_cost_is_the_gpus_rented_for_the_hours_and_splits_into_tokens():
    job_rate = 4.0
    result = rank_offers(
        offers("infiniband", price=2.0),
        serve("llama3-70b-chat", (8, 16, 32, 64), requests_per_s=job_rate, hours=100),
    )
    row = result.offers.iloc[0]
    assert row["capacity_requests_per_s"] >= job_rate
    assert row["gpu_cost_usd"] == pytest.approx(100 * row["gpus"] * 2.0)
    job = load_serving_workload("llama3-70b-chat")
    tokens_per_hour = job_rate * 3600 / 1e6
    paid = (
        row["usd_per_million_output_tokens"] * job.output_tokens
        + row["usd_per_million_input_tokens"] * job.input_tokens
    ) * tokens_per_hour
    assert paid == pytest.approx(row["gpus"] * 2.0)  # every GPU-hour is paid for by tokens
    # storage holds the served weights, nothing else; no weights are downloaded
    assert "the weights, 0.07 TB" in row["cost_basis"]


def test_a_higher_load_needs_more_gpus_and_a_load_nothing_carries_is_excluded_with_why():
    counts = (8, 16, 32, 64, 128)
    needed = []
    for load in (2.0, 20.0, 80.0):
        result = rank_offers(
            offers("infiniband"), serve("llama3-70b-chat", counts, requests_per_s=load)
        )
        needed.append(int(result.offers.iloc[0]["gpus"]))
    assert needed == sorted(needed) and needed[0] < needed[-1]
    result = rank_offers(offers("infiniband"), serve("llama3-70b-chat", (8,), requests_per_s=1e4))
    assert result.offers.empty
    reason = result.excluded["reason"].iloc[0]
    assert "short of the load of 10,000.00" in reason


def test_tighter_latency_targets_never_lower_the_price_per_token():
    prices = []
    for tpot in (400.0, 100.0, 40.0, 20.0):
        result = rank_offers(
            offers("infiniband"), serve("llama3-70b-chat", (8,), tpot_ms=tpot, requests_per_s=0.1)
        )
        row = result.offers.iloc[0] if not result.offers.empty else None
        prices.append(math.inf if row is None else row["usd_per_million_output_tokens"])
        if row is not None:
            assert row["tpot_ms"] <= tpot
    assert prices == sorted(prices)


def test_serving_has_no_deadline_and_objective_time_means_latency():
    with pytest.raises(ValidationError, match="no deadline"):
        RankRequest(
            workload=load_serving_workload("llama3-70b-chat"),
            gpu_counts=(8,),
            deadline_hours=24,
        )
    mixed = pd.concat(
        [
            offers("infiniband", price=2.0),
            offers("spectrum_x", price=9.0, gpu_model="B200-SXM-180GB", gpu_name="B200"),
        ],
        ignore_index=True,
    )
    job = load_serving_workload("llama3-70b-chat")
    by_time = rank_offers(mixed, RankRequest(workload=job, gpu_counts=(8,), objective="time"))
    assert by_time.offers["tpot_ms"].is_monotonic_increasing


def test_a_serving_file_takes_a_named_architecture_or_shape_fields(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(
        '{"architecture": "llama3-8b", "input_tokens": 512, "output_tokens": 64, "weights": "fp8"}'
    )
    job = load_serving_workload(str(path))
    assert job.name == "mine" and job.weight_bytes == pytest.approx(8.03e9)
    path.write_text('{"preset": "llama3-70b-chat", "requests_per_s": 50}')
    assert load_serving_workload(str(path)).requests_per_s == 50
    path.write_text('{"architecture": {"layers": 2}, "input_tokens": 1, "output_tokens": 1}')
    with pytest.raises(WorkloadError, match=r"mine\.json: architecture"):
        load_serving_workload(str(path))
    path.write_text('{"architecture": "llama3-8b", "input_tokens": 0, "output_tokens": 1}')
    with pytest.raises(WorkloadError, match="input_tokens: Input should be greater than 0"):
        load_serving_workload(str(path))


def test_a_load_in_output_tokens_is_that_many_requests_over_the_output_length():
    job = load_serving_workload("llama3-70b-chat")
    fields = {**job.model_dump(), "requests_per_s": None, "output_tokens_per_s": 2560.0}
    tokens = ServingWorkload.model_validate(fields)
    assert tokens.requests_per_s == pytest.approx(10.0)  # 2,560 / 256 output tokens
    same = rank_offers(offers("infiniband"), RankRequest(workload=tokens, gpu_counts=(8, 16)))
    given = rank_offers(offers("infiniband"), serve("llama3-70b-chat", (8, 16)))
    assert same.offers["total_cost_usd"].tolist() == given.offers["total_cost_usd"].tolist()
    with pytest.raises(ValidationError, match="disagree"):
        ServingWorkload.model_validate({**fields, "requests_per_s": 3.0})


def test_a_served_row_is_its_worse_fabric_end_by_tokens_not_by_time_per_token():
    """An offer whose fabric is not stated is ranked at the end that serves fewer tokens per
    GPU: on plain Ethernet the model pipelines Llama 3.1 405B over two nodes with a smaller
    batch, whose time per output token is shorter than InfiniBand's larger one, so the
    shorter TPOT is the worse end here."""
    result = rank_offers(
        offers(None, "infiniband", fabric_gbps_per_gpu=None),
        serve("llama3-405b-bf16", (16,), requests_per_s=None),
    )
    rows = result.offers.set_index("provider")
    unknown = rows.loc["None"]  # the synthetic offer with no fabric stated
    assert unknown["tokens_per_s_per_gpu"] < unknown["tokens_per_s_per_gpu_low"]
    # the shorter time per token is at the worse end: ranking by it would show the better
    assert unknown["tpot_ms"] < unknown["tpot_ms_low"]
    # and its price per token is the worse end's: higher than the InfiniBand offer's
    assert (
        unknown["usd_per_million_output_tokens"]
        > rows.loc["infiniband"]["usd_per_million_output_tokens"]
    )
    # the verdict's share is of a step at each end's own batch; it also says what the worse
    # end loses in tokens, batch included
    assert unknown["verdict"].startswith("multi-node serving: the fabric costs")
    lost = 1 - unknown["tokens_per_s_per_gpu"] / unknown["tokens_per_s_per_gpu_low"]
    assert unknown["verdict"].endswith(f"; {lost:.0%} fewer tokens/s per GPU on ethernet")
