"""Ranking offers for a workload, on a warehouse built from the recorded fixtures."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fabricscope.model.scaling import estimate
from fabricscope.model.workloads import preset
from fabricscope.rank import catalog
from fabricscope.rank.ranking import (
    RANKED_COLUMNS,
    STATED_TCP_GBPS_PER_NODE,
    UNKNOWN_GBPS_PER_NODE_WORST,
    WHAT_IF_GBPS_PER_NODE,
    RankingError,
    RankRequest,
    _pareto,
    parse_gpu_counts,
    rank,
    rank_offers,
    what_if_changes,
    what_if_rule,
)
from tests.helpers import AS_OF, fabricscope


def request(name: str, gpus: str, **extra) -> RankRequest:
    return RankRequest(workload=preset(name), gpu_counts=parse_gpu_counts(gpus), **extra)


def test_a_single_node_finetune_ranks_by_price(fixture_warehouse):
    result = rank(
        fixture_warehouse, request("finetune-7b-lora", "8", gpu_models=("H100-SXM-80GB",))
    )
    offers = result.offers
    assert len(offers) >= 5
    assert (offers["nodes"] == 1).all() and (offers["gpus_per_node"] == 8).all()
    # one GPU model on one node: the same time everywhere, so the order is the price's
    assert offers["time_to_train_h"].nunique() == 1
    assert offers["price_usd_per_gpu_hour"].is_monotonic_increasing
    assert list(offers["rank"]) == list(range(1, len(offers) + 1))
    assert set(offers["verdict"]) == {"compute-bound"}
    assert not offers["fabric_range"].any()  # one node: the fabric does not enter
    # every row carries its price's source and date, and the snapshot it was read from
    assert offers["price_source_url"].notna().all() and offers["price_observed_at"].notna().all()
    assert (offers["snapshot_id"] == result.snapshot.snapshot_id).all()


def test_a_communication_heavy_job_puts_ethernet_behind_infiniband(fixture_warehouse):
    # Voltage Park sells the same HGX H100 node on InfiniBand ($2.49) and on Ethernet ($1.99)
    result = rank(fixture_warehouse, request("mixtral-8x7b", "512", objective="time"))
    offers = result.offers.set_index("instance_type")
    ib, eth = offers.loc["HGX H100, 3200 Gbps Infiniband"], offers.loc["HGX H100, Ethernet"]
    assert eth["time_to_train_h"] > 1.15 * ib["time_to_train_h"]
    assert eth["rank"] > ib["rank"]
    assert "communication-bound" in eth["verdict"]
    # the IB card states 3200 Gb/s per node: 400 per GPU, derived and said so, not a range
    assert not ib["fabric_range"] and ib["fabric_estimated_as"] == "infiniband"
    assert pd.isna(ib["fabric_gbps_per_gpu"])  # the fact as stated stays unknown
    assert "3200 Gb/s per node over its 8 GPUs = 400" in ib["notes"]


def synthetic_offer(name: str, fabric: str | None, price: float, **extra) -> dict:
    return {
        "provider": name,
        "source": name,
        "instance_type": f"{name} 8x H100",
        "region": "r1",
        "gpu_name": "H100 SXM",
        "gpu_model": "H100-SXM-80GB",
        "gpu_count": 8,
        "gpu_form_factor": "sxm",
        "pricing_tier": "on_demand",
        "price_basis": "per_instance",
        "price_usd_per_gpu_hour": price,
        "price_source_url": f"https://{name}.example/pricing",
        "price_observed_at": datetime(2026, 11, 1, tzinfo=UTC),
        "price_obtained_by": "scraped",
        "fabric_class": fabric,
        "fabric_match": "instance_type" if fabric else None,
        "fabric_gbps_per_gpu": 400.0 if fabric else None,
        "multi_node": True if fabric else None,
        "max_cluster_gpus": None,
        **extra,
    }


def test_at_1024_gpus_plain_ethernet_loses_to_infiniband_and_spectrum_x_at_similar_prices():
    offers = pd.DataFrame(
        [
            synthetic_offer("ib", "infiniband", 2.50),
            synthetic_offer("sx", "spectrum_x", 2.45),
            synthetic_offer("eth", "ethernet", 2.30),
        ]
    )
    result = rank_offers(offers, request("deepseek-v3", "1024"))
    order = list(result.offers["provider"])
    assert order.index("eth") == 2, order
    times = result.offers.set_index("provider")["time_to_train_h"]
    assert times["eth"] > 1.2 * times["ib"]


def test_an_unknown_fabric_is_a_range_never_a_confident_number():
    offers = pd.DataFrame(
        [synthetic_offer("known", "infiniband", 2.5), synthetic_offer("mystery", None, 2.5)]
    )
    result = rank_offers(offers, request("mixtral-8x7b", "256"))
    rows = result.offers.set_index("provider")
    mystery = rows.loc["mystery"]
    assert mystery["fabric_range"] and pd.isna(mystery["fabric_class"])
    assert mystery["time_to_train_h_low"] < mystery["time_to_train_h"]
    assert mystery["cost_usd_low"] < mystery["cost_usd"]
    assert "unknown" in mystery["fabric_estimated_as"]
    assert "multi-node support not stated" in mystery["notes"]
    assert not rows.loc["known"]["fabric_range"]
    # ranked by the pessimistic end: the stated InfiniBand offer first at the same price
    assert rows.loc["known"]["rank"] < mystery["rank"]


def test_exclusions_carry_their_reasons(fixture_warehouse):
    result = rank(fixture_warehouse, request("gpt3-175b", "8"))
    reasons = result.excluded["reason"]
    assert reasons.str.contains("does not fit in GPU memory").any()
    assert reasons.str.contains("pricing tier spot not requested").any()
    assert reasons.str.contains("GPU not identified").any()
    assert result.excluded["reason"].notna().all()
    every = rank(fixture_warehouse, request("finetune-7b-lora", "8"))
    # every catalog offer is ranked or excluded with a reason: none dropped silently
    from fabricscope.rank.ranking import offer_key

    catalog = {offer_key(row) for row in every.catalog.to_dict("records")}
    seen = set(every.offers["offer_key"]) | set(every.excluded["offer_key"]) | set(every.merged)
    assert catalog and seen == catalog

    strict = rank(
        fixture_warehouse,
        request("llama3-70b", "64", min_fabric_class="infiniband", max_budget_usd=1000.0),
    )
    assert strict.offers.empty
    text = " ".join(strict.excluded["reason"])
    assert "below the minimum infiniband" in text and "budget" in text


def test_what_if_fabric_shows_what_the_fabric_is_worth(fixture_warehouse):
    base = rank(fixture_warehouse, request("mixtral-8x7b", "512", min_fabric_class="infiniband"))
    worse = rank(
        fixture_warehouse,
        request("mixtral-8x7b", "512", min_fabric_class="infiniband", fabric_override="ethernet"),
    )
    assert len(base.offers) and set(base.offers["offer_key"]) == set(worse.offers["offer_key"])
    joined = base.offers.merge(worse.offers, on="offer_key", suffixes=("", "_eth"))
    assert (joined["time_to_train_h_eth"] >= joined["time_to_train_h"]).all()
    assert (joined["time_to_train_h_eth"] > joined["time_to_train_h"]).any()
    assert worse.offers["fabric_estimated_as"].str.contains("what if").all()


def test_pareto_rows_are_not_dominated(fixture_warehouse):
    offers = rank(fixture_warehouse, request("llama3-8b", "64", objective="blend")).offers
    front = offers[offers["pareto"]]
    assert len(front) >= 1
    for _, row in front.iterrows():
        better = offers[
            (offers["time_to_train_h"] <= row["time_to_train_h"])
            & (offers["cost_usd"] <= row["cost_usd"])
            & (
                (offers["time_to_train_h"] < row["time_to_train_h"])
                | (offers["cost_usd"] < row["cost_usd"])
            )
        ]
        assert better.empty


def test_cost_is_the_whole_nodes_rented_times_the_price(fixture_warehouse):
    offers = rank(fixture_warehouse, request("llama3-8b", "4")).offers
    row = offers.iloc[0]
    rented = row["nodes"] * row["gpus_per_node"]
    assert row["cost_usd"] == pytest.approx(
        row["time_to_train_h"] * rented * row["price_usd_per_gpu_hour"]
    )
    assert row["usd_per_million_tokens"] == pytest.approx(
        row["cost_usd"] / (preset("llama3-8b").tokens / 1e6)
    )


def test_a_range_of_gpu_counts_picks_each_offers_best():
    assert parse_gpu_counts("64-512") == (64, 128, 256, 512)
    assert parse_gpu_counts("48-100") == (48, 64, 100)
    assert parse_gpu_counts("8,16") == (8, 16)
    for bad in ("", "0", "8-x", "512-64", "-3"):
        with pytest.raises(RankingError):
            parse_gpu_counts(bad)
    offers = pd.DataFrame([synthetic_offer("ib", "infiniband", 2.5)])
    fastest = rank_offers(offers, request("llama3-8b", "8-64", objective="time")).offers
    assert fastest.iloc[0]["gpus"] == 64
    cheapest = rank_offers(offers, request("llama3-8b", "8-64", objective="cost")).offers
    assert cheapest.iloc[0]["gpus"] < 64  # more GPUs cost more GPU-hours here


def test_invalid_requests_are_clear_errors():
    with pytest.raises(ValidationError, match="unknown fabric class"):
        request("llama3-8b", "8", min_fabric_class="fast")
    with pytest.raises(ValidationError):
        request("llama3-8b", "8", tiers=("cheap",))
    with pytest.raises(ValidationError):
        request("llama3-8b", "8", max_budget_usd=-1)
    with pytest.raises(ValidationError, match="between 1 and"):
        RankRequest(workload=preset("llama3-8b"), gpu_counts=(0,))


def test_the_cli_prints_the_same_numbers_as_the_api(fixture_warehouse):
    done = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "64", "--format", "json",
        "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    api = rank(fixture_warehouse, request("llama3-8b", "64")).offer_records()
    assert [r["offer_key"] for r in payload["offers"]] == [r["offer_key"] for r in api]
    assert payload["offers"][0]["cost_usd"] == pytest.approx(api[0]["cost_usd"])
    assert set(RANKED_COLUMNS) <= set(payload["offers"][0])
    assert payload["snapshot_id"] == api[0]["snapshot_id"]

    csv_done = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "64", "--format", "csv",
        "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert csv_done.returncode == 0
    assert csv_done.stdout.splitlines()[0].split(",")[: len(RANKED_COLUMNS)] == RANKED_COLUMNS

    bad = fabricscope("rank", "-w", "llama3-8b", "--gpus", "lots")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--gpus" in bad.stderr
    missing = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "8", "--warehouse", "nowhere/w.duckdb"
    )
    assert missing.returncode == 1 and "fabricscope init" in missing.stderr


def test_refresh_materialises_every_preset_ranking(fixture_warehouse):
    from fabricscope.rank.materialised import materialised_rankings
    from fabricscope.warehouse.db import read_frame

    snapshot, rows = read_frame(fixture_warehouse, "select * from estimates_current")
    assert snapshot.snapshot_id == rows["snapshot_id"].iloc[0]
    assert (rows["based_on_snapshot"] == snapshot.snapshot_id - 1).all()
    items = materialised_rankings()
    wanted = {(item.preset, item.gpus, item.tier.value) for item in items if not item.serve}
    got = set(zip(rows["workload"], rows["gpus_requested"], rows["pricing_tier"], strict=True))
    assert got == wanted
    # the serving presets' rows are in their own table, from the same materialisation
    _, served = read_frame(fixture_warehouse, "select * from serving_estimates_current")
    assert set(served["workload"]) == {item.preset for item in items if item.serve}
    assert (served["snapshot_id"] == snapshot.snapshot_id).all()
    # the SQL an analyst would write gives what `fabricscope rank` gives
    _, cheapest = read_frame(
        fixture_warehouse,
        "select offer_key, cost_usd from estimates_current "
        "where workload = 'llama3-70b' and pricing_tier = 'on_demand' order by rank",
    )
    api = rank(fixture_warehouse, request("llama3-70b", "512")).offers
    assert list(cheapest["offer_key"]) == list(api["offer_key"])
    assert cheapest["cost_usd"].tolist() == pytest.approx(api["cost_usd"].tolist())
    assert rows["transparency_score"].notna().any()  # beside every provider that has one


def test_a_stored_calibration_replaces_the_class_default_in_the_ranking(
    fixture_warehouse, tmp_path
):
    import shutil

    from tests.helpers import ROOT

    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, copy)
    job = request("deepseek-v3", "512", min_fabric_class="roce")  # communication-bound
    before = rank(copy, job).offers.set_index("offer_key")
    oracle = [k for k in before.index if k.startswith("oracle/")]
    assert oracle, "the fixture warehouse has an Oracle RoCE offer"
    # a measured 2-node RoCE all-reduce for Oracle (fixtures/nccl_tests), stored as a snapshot
    stored = fabricscope(
        "calibrate", str(ROOT / "fixtures" / "nccl_tests" / "roce_2n_16g_all_reduce.txt"),
        "--provider", "oracle", "--fabric-class", "roce", "--warehouse", str(copy),
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    after = rank(copy, job).offers.set_index("offer_key")
    changed = [
        k for k in oracle if after.loc[k, "time_to_train_h"] != before.loc[k, "time_to_train_h"]
    ]
    assert changed, "the calibration should change Oracle's estimate"
    others = [k for k in before.index if not k.startswith("oracle/")]
    assert (after.loc[others, "time_to_train_h"] == before.loc[others, "time_to_train_h"]).all()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6)).map(lambda p: (float(p[0]), float(p[1]))),
        min_size=1,
        max_size=25,
    )
)
def test_the_pareto_front_is_the_offers_no_other_dominates(points):
    """The sorted sweep agrees with the definition checked pair by pair (ties included)."""
    times, costs = zip(*points, strict=True)
    expected = [
        not any(
            t2 <= t and c2 <= c and (t2 < t or c2 < c) for t2, c2 in points if (t2, c2) != (t, c)
        )
        for t, c in points
    ]
    assert _pareto(pd.Series(times), pd.Series(costs)) == expected


def test_prices_are_aged_at_the_time_given_not_the_clock(fixture_warehouse):
    job = request("llama3-8b", "64")
    first = rank(fixture_warehouse, job, AS_OF).offers
    later = rank(fixture_warehouse, job, AS_OF + timedelta(days=10)).offers
    observed = pd.to_datetime(first["price_observed_at"], utc=True)
    expected = ((pd.Timestamp(AS_OF) - observed).dt.total_seconds() / 86400).round(2)
    assert first["data_age_days"].tolist() == expected.tolist()
    assert (later["data_age_days"] - first["data_age_days"]).round(2).eq(10).all()

    # the CLI takes the same time from the as_of setting
    done = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "64", "--format", "json",
        "--warehouse", str(fixture_warehouse), env={"FABRICSCOPE_AS_OF": AS_OF.isoformat()},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ages = [row["data_age_days"] for row in json.loads(done.stdout)["offers"]]
    assert ages == first["data_age_days"].tolist()
    bad = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "64", env={"FABRICSCOPE_AS_OF": "yesterday"}
    )
    assert bad.returncode == 2 and "FABRICSCOPE_AS_OF" in bad.stderr


def test_an_unknown_fabrics_worse_end_is_tcp_on_a_front_end_nic():
    offers = pd.DataFrame(
        [
            synthetic_offer("mystery", None, 2.5),
            # the old worse end: Ethernet at 50 Gb/s per GPU (400 per node)
            synthetic_offer("eth50", "ethernet", 2.5, fabric_gbps_per_gpu=50.0),
        ]
    )
    rows = rank_offers(offers, request("llama3-70b", "512")).offers.set_index("provider")
    mystery = rows.loc["mystery"]
    per_gpu = UNKNOWN_GBPS_PER_NODE_WORST / 8  # 32 Gb/s per node over its 8 GPUs
    assert f"ethernet at {per_gpu:g} to infiniband at 400" in mystery["fabric_estimated_as"]
    assert mystery["time_to_train_h"] > rows.loc["eth50", "time_to_train_h"]
    assert mystery["time_to_train_h_low"] < rows.loc["eth50", "time_to_train_h"]


def test_a_stated_tcp_network_without_bandwidth_is_a_tcp_range_not_an_rdma_one():
    offers = pd.DataFrame(
        [
            synthetic_offer("tcp", "ethernet", 2.5, fabric_gbps_per_gpu=None),
            synthetic_offer("rdma", "roce", 2.5, fabric_gbps_per_gpu=None),
            synthetic_offer("eth25", "ethernet", 2.5, fabric_gbps_per_gpu=25.0),  # 200 per node
        ]
    )
    rows = rank_offers(offers, request("llama3-70b", "512")).offers.set_index("provider")
    low, high = (g / 8 for g in STATED_TCP_GBPS_PER_NODE)
    assert rows.loc["tcp", "fabric_estimated_as"] == (
        f"ethernet, bandwidth unknown: {low:g}-{high:g} Gb/s per GPU"
    )
    assert "50-400 Gb/s per GPU" in rows.loc["rdma", "fabric_estimated_as"]
    # its better end is the 200 Gb/s per node a provider documents over TCP, never more
    assert rows.loc["tcp", "time_to_train_h_low"] == pytest.approx(
        rows.loc["eth25", "time_to_train_h"]
    )
    assert rows.loc["tcp", "time_to_train_h"] > rows.loc["eth25", "time_to_train_h"]


def test_the_what_if_uses_the_bandwidth_that_fabric_really_has():
    offers = pd.DataFrame([synthetic_offer("ib", "infiniband", 2.5)])  # 400 Gb/s per GPU
    job = request("llama3-70b", "512")
    as_ethernet = rank_offers(offers, job).what_if("ethernet").offers.iloc[0]
    gbps = WHAT_IF_GBPS_PER_NODE["ethernet"]
    assert f"ethernet at {gbps / 8:g} Gb/s per GPU (what if)" == as_ethernet["fabric_estimated_as"]
    same = rank_offers(offers, job).what_if("infiniband").offers.iloc[0]
    assert "infiniband at 400 Gb/s per GPU" in same["fabric_estimated_as"]  # its own figure


def test_offers_that_do_not_cluster_are_excluded_from_multi_node_jobs_with_the_reason():
    offers = pd.DataFrame(
        [
            synthetic_offer("ib", "infiniband", 2.5),
            synthetic_offer(
                "market",
                None,
                1.0,
                multi_node=False,
                multi_node_reason="a marketplace host (market): not a cluster unless a source "
                "says so",
            ),
            synthetic_offer("mystery", None, 2.5, multi_node_reason="not stated by any source"),
        ]
    )
    result = rank_offers(offers, request("llama3-70b", "512"))
    assert set(result.offers["provider"]) == {"ib", "mystery"}
    reason = result.excluded.set_index("provider").loc["market", "reason"]
    assert "does not cluster: a marketplace host" in reason
    mystery = result.offers.set_index("provider").loc["mystery"]
    assert pd.isna(mystery["multi_node"]) and mystery["multi_node_reason"] == (
        "not stated by any source"
    )
    # on one node the marketplace box is as good as any
    single = rank_offers(offers, request("finetune-7b-lora", "8"))
    assert "market" in set(single.offers["provider"])


def test_the_fixture_warehouse_states_multi_node_for_every_offer(fixture_warehouse):
    catalog = rank(fixture_warehouse, request("llama3-8b", "8")).catalog
    assert catalog["multi_node_reason"].notna().all()
    vast = catalog[catalog["provider"] == "vast_ai"]
    assert len(vast) and (vast["multi_node"] == False).all()  # noqa: E712 (object column)
    singles = catalog[(catalog["gpu_count"] == 1) & catalog["fabric_match"].isna()]
    slices = singles["gpu_form_factor"].isin(["sxm", "superchip"]) & singles["price_basis"].isin(
        ["per_gpu", "gpu_only_host_extra"]
    )
    assert (singles.loc[~slices, "multi_node"] == False).all()  # noqa: E712


def test_old_prices_can_be_left_out_and_say_why():
    offers = pd.DataFrame(
        [
            synthetic_offer("fresh", "infiniband", 2.5),
            synthetic_offer(
                "old", "infiniband", 1.5, price_observed_at=datetime(2024, 1, 1, tzinfo=UTC)
            ),
        ]
    )
    now = datetime(2026, 12, 1, tzinfo=UTC)
    every = rank_offers(offers, request("llama3-8b", "64"), now=now).offers
    assert list(every["provider"]) == ["old", "fresh"]
    assert every.set_index("provider")["data_age_days"].to_dict() == {"old": 1065.0, "fresh": 30.0}
    recent = rank_offers(offers, request("llama3-8b", "64", max_price_age_days=90), now=now)
    assert list(recent.offers["provider"]) == ["fresh"]
    assert recent.excluded["reason"].tolist() == [
        "price observed 1065 days ago, older than the 90-day limit"
    ]


def test_one_offer_sold_in_many_regions_at_one_price_is_one_row():
    offers = pd.DataFrame(
        [
            synthetic_offer("lambda", "infiniband", 2.5, region="us-west-1"),
            synthetic_offer("lambda", "infiniband", 2.5, region="asia-1"),
            synthetic_offer("lambda", "infiniband", 2.5, region="eu-1"),
            synthetic_offer("lambda", "infiniband", 2.9, region="us-east-1"),  # its own price
        ]
    )
    result = rank_offers(offers, request("llama3-8b", "64"))
    rows = result.offers.set_index("region")
    assert sorted(rows.index) == ["asia-1", "us-east-1"]
    assert rows.loc["asia-1", "regions"] == "asia-1, eu-1, us-west-1"
    assert rows.loc["asia-1", "region_count"] == 3
    assert rows.loc["us-east-1", "regions"] == "us-east-1"
    assert result.merged == {
        "lambda/lambda 8x H100/eu-1/on_demand": "lambda/lambda 8x H100/asia-1/on_demand",
        "lambda/lambda 8x H100/us-west-1/on_demand": "lambda/lambda 8x H100/asia-1/on_demand",
    }
    assert result.excluded.empty  # merged rows are not exclusions


def test_the_fixture_catalogs_region_copies_do_not_flood_the_ranking(fixture_warehouse):
    result = rank(fixture_warehouse, request("llama3-8b", "8"))
    lambda_rows = result.offers[result.offers["provider"] == "lambda"]
    in_catalog = result.catalog[result.catalog["provider"] == "lambda"]
    assert len(in_catalog) > 3 * len(lambda_rows) > 0
    assert lambda_rows["offer_key"].is_unique
    # SkyPilot's Lambda catalog repeats each type in its 17 regions at one global price
    assert lambda_rows["region_count"].max() == 17


def test_common_cluster_sizes_get_offers_and_true_reasons(fixture_warehouse):
    """Llama 3 70B on 384 or 1,536 GPUs and Llama 3 8B on 96 got no offer and the reason
    "does not fit in GPU memory ... 570 GB per GPU": 2,048 sequences divide by no
    data-parallel degree those counts allow with pp dividing 80 layers. Uneven stages and a
    batch that is a target, not a law, give them plans; where a GPU truly lacks the memory,
    the reason says how much the leanest layout needs of what the GPU has, and on which GPU
    counts the job has a plan."""
    for name, gpus in (("llama3-70b", "384"), ("llama3-70b", "1536"), ("llama3-8b", "96")):
        result = rank(fixture_warehouse, request(name, gpus))
        assert len(result.offers) > 5, (name, gpus)
        h100 = result.offers[result.offers["gpu_model"] == "H100-SXM-80GB"]
        assert len(h100), (name, gpus)
        memory = result.excluded[result.excluded["reason"].str.contains("GPU memory", na=False)]
        assert not (memory["gpu_model"] == "H100-SXM-80GB").any(), (name, gpus)
    small = rank(fixture_warehouse, request("llama3-405b", "16"))
    lacking = small.excluded[small.excluded["reason"].str.contains("GPU memory", na=False)]
    assert len(lacking)
    reason = lacking[lacking["gpu_model"] == "H100-SXM-80GB"]["reason"].iloc[0]
    assert "of the 80 GB it has" in reason and "it has a plan on" in reason, reason
    # the counts named really have a plan: rank there and the H100 offers are in
    named = re.search(r"it has a plan on ([\d,]+)(?: or ([\d,]+))? GPUs", reason)
    assert named is not None
    there = [int(g.replace(",", "")) for g in named.groups() if g]
    assert all(n > 16 for n in there)
    again = rank(fixture_warehouse, request("llama3-405b", str(there[-1])))
    assert (again.offers["gpu_model"] == "H100-SXM-80GB").any()


def test_a_moved_batch_and_uneven_stages_are_said_on_the_row(fixture_warehouse):
    """GPT-3 175B on 992 GPUs (31 x 32): no layout divides its 1,536 sequences, so the plan
    runs the nearest batch one does and the row says which, by how much; an exact batch is
    never moved, and then the reason says so."""
    result = rank(fixture_warehouse, request("gpt3-175b", "992"))
    assert len(result.offers)
    notes = " ".join(n for n in result.offers["notes"] if n)
    assert re.search(r"planned with a batch of 1,5\d\d sequences, not 1,536 \([+-]\d", notes)
    gpt = request("gpt3-175b", "992").workload.model_copy(update={"exact_batch": True})
    exact = rank(fixture_warehouse, RankRequest(workload=gpt, gpu_counts=[992]))
    assert exact.offers.empty
    reasons = " ".join(r for r in exact.excluded["reason"] if r)
    assert "no layout runs the exact batch of 1,536 sequences on 992 GPUs" in reasons
    uneven = rank(fixture_warehouse, request("llama3-70b", "384"))
    assert any("uneven pipeline stages" in (n or "") for n in uneven.offers["notes"])


def test_one_what_if_says_which_bandwidth_each_offer_is_costed_at(fixture_warehouse):
    """The what-if costs an offer stated at 3,200 Gb/s InfiniBand per node at plain
    Ethernet's documented 100 Gb/s per node (12.5 per GPU), and says so: on the row, in the
    rule the app, CLI and memo print (the app once said "each offer's stated bandwidth is
    kept"), with the change and the exposed communication beside today's."""
    base = rank(fixture_warehouse, request("mixtral-8x7b", "512", min_fabric_class="infiniband"))
    changes = what_if_changes(base, base.what_if("ethernet"))
    assert list(changes["offer_key"]) == list(base.offers["offer_key"])
    pairs = zip(
        changes["fabric_what_if"],
        changes["fabric_gbps_what_if"],
        base.offers["gpus_per_node"],
        strict=True,
    )
    for label, gbps, per_node in pairs:
        per_gpu = WHAT_IF_GBPS_PER_NODE["ethernet"] / per_node  # 12.5 on 8-GPU nodes
        assert label == f"ethernet at {per_gpu:g} Gb/s per GPU (what if)"
        assert gbps == pytest.approx(per_gpu)  # the figure the label states, as a number
    assert (changes["time_change"] > 0).all() and (changes["cost_change_usd"] > 0).all()
    assert (changes["comm_fraction_exposed_what_if"] > changes["comm_fraction_exposed"]).all()
    rule = what_if_rule("ethernet")
    assert "100 Gb/s per node" in rule and "keeps its own figure" in rule
    assert "stated bandwidth is kept" not in rule


def test_moe_all_to_all_inside_a_node_does_not_cross_slow_ethernet():
    """Mixtral on 512 A40 over 12.5 Gb/s Ethernet read as compute-bound at 51% MFU. By the
    model's own equations its 8 experts' all-to-all stays inside each 8-GPU node (the same
    time on any fabric), but each expert's gradients reduce over its 64 copies, one per
    node, each over its GPU's own 12.5 Gb/s link, under the last micro-batch's backward
    only: balanced, not compute-bound, where 400 Gb/s InfiniBand keeps it compute-bound.
    On H100, whose backward is 6x shorter, the same fabric exposes most of the step."""
    job = preset("mixtral-8x7b")

    def one(gpu: str, fabric: str, gbps: float) -> dict:
        hw = catalog.profiles(
            [
                {
                    "gpu_model": gpu,
                    "gpu_count": 512,
                    "gpus_per_node": 8,
                    "fabric_class": fabric,
                    "fabric_gbps_per_gpu": gbps,
                }
            ]
        )
        return estimate(job, hw).row(0)

    slow, fast = one("A40-PCIE-48GB", "ethernet", 12.5), one("A40-PCIE-48GB", "infiniband", 400)
    assert slow["ep_comm_s"] == pytest.approx(fast["ep_comm_s"])  # all inside the node
    assert slow["verdict"] == "balanced" and fast["verdict"] == "compute-bound"
    assert slow["step_time_s"] > 1.2 * fast["step_time_s"]
    h100 = one("H100-SXM-80GB", "ethernet", 12.5)
    assert h100["verdict"] == "communication-bound" and h100["dp_comm_exposed_s"] > 1.0


def test_every_ranked_row_says_what_the_offer_is_and_who_sells_it(fixture_warehouse):
    result = rank(fixture_warehouse, request("llama3-70b", "512"))
    offers = result.offers
    for column in ("gpu_model", "gpus_per_node", "offer_label", "sold_by", "sold_and_run_by"):
        assert offers[column].notna().all(), column
    # what a buyer decides on comes first: who, what GPU, how many per node, then the id
    first = RANKED_COLUMNS.index("instance_type")
    assert {"sold_by", "offer_label", "gpu_model", "gpus_per_node"} <= set(RANKED_COLUMNS[:first])
    # Prime Intellect's listing of a Nebius machine: its price is Prime Intellect's, copied
    # by SkyPilot's catalog; the machine is Nebius's
    resold = offers.set_index("instance_type").loc["nebius__8xH100_80GB__128__1600"]
    assert resold["provider"] == "nebius" and resold["sold_by"] == "prime_intellect"
    assert resold["sold_and_run_by"] == "sold by Prime Intellect, runs on Nebius"
    assert resold["price_published_by"] == (
        "Prime Intellect, copied by SkyPilot's catalog, a third-party mirror of its list"
    )
    # the 1600 in its name is RAM: the label says only what the sources state
    assert resold["offer_label"] == "8x H100 SXM 80GB, InfiniBand, bandwidth not stated"
    card = offers.set_index("instance_type").loc["HGX H100, 3200 Gbps Infiniband"]
    assert card["sold_and_run_by"] == "sold by Voltage Park"
    assert card["price_published_by"] == "Voltage Park, on its own pricing page"
    # the providers summary names its best offer's GPU, node size, label and seller
    best = result.providers.set_index("provider").loc["nebius"]
    first = offers[offers["provider"] == "nebius"].iloc[0]
    for column in ("gpu_model", "gpus_per_node", "offer_label", "sold_and_run_by"):
        assert best[column] == first[column], column
    # and the exclusions say what was excluded
    assert result.excluded["offer_label"].notna().all()
    assert result.excluded["sold_by"].notna().all()


@pytest.mark.parametrize(
    ("fields", "label"),
    [
        ({"fabric_gbps_per_node": 3200.0}, "8x H100 SXM 80GB, 3,200 Gb/s InfiniBand"),
        ({"fabric_gbps_per_gpu": 400.0}, "8x H100 SXM 80GB, 400 Gb/s per GPU InfiniBand"),
        ({"fabric_gbps_per_gpu": None}, "8x H100 SXM 80GB, InfiniBand, bandwidth not stated"),
        (
            {"fabric_class": None, "fabric_gbps_per_gpu": None, "fabric_gbps_per_node": 350.0},
            "8x H100 SXM 80GB, 350 Gb/s, fabric class not stated",
        ),
        (
            {"fabric_class": None, "fabric_gbps_per_gpu": None},
            "8x H100 SXM 80GB, fabric not stated",
        ),
        ({"fabric_class": "none"}, "8x H100 SXM 80GB, no cluster fabric"),
        (
            {"gpu_model": None, "gpu_name": "Mystery X1", "fabric_class": None}
            | {"fabric_gbps_per_gpu": None},
            "8x Mystery X1 (GPU not identified), fabric not stated",
        ),
        (
            {"gpu_count": 1, "price_basis": "per_gpu", "gpu_model": "A100-PCIE-40GB"},
            "A100 PCIe 40GB, priced per GPU, 400 Gb/s per GPU InfiniBand",
        ),
    ],
)
def test_an_offer_label_says_only_what_is_stated(fields, label):
    from fabricscope.rank.ranking import offer_label

    offer = {**synthetic_offer("p", "infiniband", 2.0), "fabric_gbps_per_node": None, **fields}
    assert offer_label(offer) == label


def test_every_broker_catalog_has_its_seller():
    """A spider that names the cloud behind each row (``broker_providers``) sells at the
    broker's price: ranking.RESELLER_SOURCES must name that broker, a provider we know."""
    import importlib
    import pkgutil

    import fabricscope.scrapers.spiders as spiders
    from fabricscope.rank.ranking import RESELLER_SOURCES, _provider_reference

    brokers = {}
    for module in pkgutil.iter_modules(spiders.__path__):
        loaded = importlib.import_module(f"fabricscope.scrapers.spiders.{module.name}")
        for value in vars(loaded).values():
            if isinstance(value, type) and getattr(value, "broker_providers", None):
                brokers[value.name] = value
    assert brokers and set(brokers) == set(RESELLER_SOURCES)
    known = _provider_reference()
    for source, seller in RESELLER_SOURCES.items():
        assert known[seller][1] == "broker", source


def test_exclusion_reasons_speak_a_buyers_words(fixture_warehouse):
    """No internal file names; a missed deadline in days, as the app and the CLI ask it."""
    result = rank(fixture_warehouse, request("llama3-70b", "512", deadline_hours=100 * 24))
    reasons = result.excluded["reason"]
    assert not reasons.str.contains(r"\.csv|gpus\.csv|instance_catalog|NULL").any()
    late = reasons[reasons.str.contains("deadline")]
    assert (
        len(late)
        and late.str.fullmatch(
            r"takes at least [\d,]+\.\d days even on the best fabric, past the 100-day deadline"
        ).all()
    )
    assert reasons.str.contains("no sourced figure for its compute").any()
    assert reasons.str.contains("not enough to tell which GPU").any()
    assert not reasons.str.contains("\n").any()  # one line each
