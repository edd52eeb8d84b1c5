"""The Rank page on real warehouses: the ranking, its ranges, its URL and its inputs."""

from __future__ import annotations

import re
from dataclasses import replace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fabricscope.app.rank_data import SnapshotMoved, _inputs, duration, usd
from fabricscope.app.view_state import (
    DEFAULT_PRESET,
    MAX_STARS,
    RankView,
    WorkloadFields,
    request_of,
)
from fabricscope.model.workloads import preset
from fabricscope.rank.costs import CHECKPOINT_BYTES_PER_PARAM, HOURS_PER_MONTH, TB
from fabricscope.rank.ranking import rank
from fabricscope.warehouse.db import current_snapshot
from tests.helpers import AS_OF, publish_synthetic
from tests.ui.apptest import (
    open_page,
    served_as_ranked_live,
    text_of,
    tick,
    ticked,
    url_values,
)

RANK = "pages/rank.py"


def offers_shown(app: AppTest) -> pd.DataFrame:
    """The ranked offers table (the one with an offer_key and a time_to_train column)."""
    for frame in app.dataframe:
        value = frame.value
        if "offer_key" in value.columns and "time_to_train" in value.columns:
            return value
    raise AssertionError("no ranked offers table on the page")


def metric(app: AppTest, label: str) -> str:
    return {m.label: m.value for m in app.metric}[label]


def worse_end_usd(cost: str) -> float:
    """The last amount of a whole cost as shown ('$0.41M–$0.52M + ?' gives 520,000)."""
    amount, millions = re.findall(r"\$([\d,.]+)(M?)", cost)[-1]
    return float(amount.replace(",", "")) * (1e6 if millions else 1)


def test_the_ranking_matches_the_pipeline_and_shows_ranges(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    assert not app.exception and not app.error
    shown = offers_shown(app)
    expected = rank(fixture_warehouse, request_of(RankView()), AS_OF).offers
    assert list(shown["offer_key"]) == list(expected["offer_key"])
    # an unknown fabric that changes the answer (as shown: whole days past three) is a range,
    # never one number
    shown_as = expected["time_to_train_h"].map(duration)
    differs = expected["fabric_range"] & (shown_as != expected["time_to_train_h_low"].map(duration))
    ranges = shown.loc[differs.to_numpy(), "time_to_train"]
    assert not ranges.empty and ranges.str.contains("–").all()
    same = shown.loc[(expected["fabric_range"] & ~differs).to_numpy(), "time_to_train"]
    assert same.str.contains("same on any fabric").all()
    assert metric(app, "Offers ranked") == f"{len(expected):,}"
    assert any("Excluded offers" in e.label for e in app.expander)
    charts = app.get("vega_lite_chart")
    assert len(charts) == 2, "the time-cost scatter and the step-time bars"


def test_changing_the_workload_changes_the_ranking(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    before = offers_shown(app)[["offer_key", "time_to_train", "cost"]].head(5)
    app.selectbox(key="rk_preset").select("llama3-70b").run()
    assert not app.exception
    after = offers_shown(app)[["offer_key", "time_to_train", "cost"]].head(5)
    assert not before.equals(after)
    assert url_values(app, "preset") == ["llama3-70b"], "the URL follows the inputs"
    assert "Llama 3 70B" in text_of(app)


def test_query_params_restore_the_view(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    view = RankView(preset="mixtral-8x7b", gpus="32-128", objective="time", what_if="infiniband")
    expected = rank(fixture_warehouse, request_of(view), AS_OF).offers
    star = str(expected["offer_key"].iloc[1])
    params = {
        "preset": "mixtral-8x7b",
        "gpus": "32-128",
        "objective": "time",
        "what_if": "infiniband",
        "star": [star],
    }
    app = open_page(RANK, params)
    assert not app.exception and not app.error
    assert app.selectbox(key="rk_preset").value == "mixtral-8x7b"
    assert app.text_input(key="rk_gpus").value == "32-128"
    assert app.radio(key="rk_objective").value == "time"
    assert app.selectbox(key="rk_what_if").value == "infiniband"
    shown = offers_shown(app)
    assert list(shown["offer_key"]) == list(expected["offer_key"])
    assert ticked(app) == [star], "the link's star is ticked in the grid"
    what_if = [f.value for f in app.dataframe if "time_what_if" in f.value.columns]
    assert what_if and len(what_if[0]) == len(expected)
    # it says at which bandwidth each offer is costed, as the CLI and the memo do
    assert what_if[0]["fabric_what_if"].str.contains("infiniband at").all()
    assert "costed as if its nodes were joined by infiniband at 3,200 Gb/s" in text_of(app)
    assert url_values(app, "star") == [star]


def test_a_custom_workload_is_validated_and_ranked(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    app.toggle(key="rk_custom").set_value(True).run()
    assert not app.exception
    default = preset(DEFAULT_PRESET)
    assert app.number_input(key="rk_w_layers").value == default.layers
    app.number_input(key="rk_w_heads").set_value(33).run()
    assert not app.exception
    assert any("not a multiple of heads 33" in e.value for e in app.error)
    app.number_input(key="rk_w_heads").set_value(default.heads)
    app.number_input(key="rk_w_layers").set_value(48).run()
    assert not app.exception and not app.error
    assert url_values(app, "custom") == ["1"] and url_values(app, "w_layers") == ["48"]
    assert f"custom ({default.name})" in text_of(app)


def test_the_training_software_is_a_workload_choice_that_slows_eager_pytorch(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    app.toggle(key="rk_custom").set_value(True).run()
    stack = app.selectbox(key="rk_w_stack")
    assert stack.value == "megatron" and stack.options == ["megatron", "fsdp", "eager"]
    assert "torchtitan" in stack.help
    stack.select("eager").run()
    assert not app.exception and not app.error
    assert url_values(app, "w_stack") == ["eager"]
    custom = WorkloadFields.of(preset(DEFAULT_PRESET))
    tuned, eager = (
        rank(fixture_warehouse, request_of(RankView(custom=replace(custom, stack=s))), AS_OF)
        for s in ("megatron", "eager")
    )
    assert list(offers_shown(app)["offer_key"]) == list(eager.offers["offer_key"])
    slower = eager.offers.set_index("offer_key")["time_to_train_h"]
    faster = tuned.offers.set_index("offer_key")["time_to_train_h"]
    assert (slower > faster.reindex(slower.index)).all()


def test_the_whole_cost_counts_the_data_at_the_storage_price_given(
    use_warehouse, fixture_warehouse
):
    """A dataset size and a storage price entered in the folded whole-cost inputs cost
    storage on every ranked row at that price, and are in the URL."""
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    [fold] = [e for e in app.expander if e.label == "Whole cost: data, downloads, support"]
    assert fold.proto.expanded is False, "left alone, it stays out of the way"
    before = offers_shown(app).set_index("offer_key")["cost"]
    assert not app.number_input(key="rk_dataset_tb").value
    assert app.number_input(key="rk_checkpoints_kept").value == 2
    assert "14 bytes per trainable parameter" in app.number_input(key="rk_checkpoints_kept").help
    app.number_input(key="rk_dataset_tb").set_value(2000.0)
    app.number_input(key="rk_storage_price").set_value(50.0).run()
    assert not app.exception and not app.error
    assert url_values(app, "data_tb") == ["2000"] and url_values(app, "storage_price") == ["50"]
    assert "Served from the ranking" not in text_of(app), "not the stored default ranking"

    view = RankView(dataset_tb=2000.0, storage_usd_per_tb_month=50.0)
    expected = rank(fixture_warehouse, request_of(view), AS_OF).offers
    shown = offers_shown(app)
    assert list(shown["offer_key"]) == list(expected["offer_key"])
    # the checkpoints and the data, for as long as the run (its worse end), at $50 a TB-month
    stored_tb = 2 * CHECKPOINT_BYTES_PER_PARAM * request_of(view).workload.trainable_params / TB
    storage = (stored_tb + 2000) * expected["time_to_train_h"] / HOURS_PER_MONTH * 50
    assert expected["storage_usd"].to_numpy() == pytest.approx(storage.to_numpy())
    for parts, amount in zip(shown["cost_parts"], storage, strict=True):
        assert f"storage {usd(amount)}" in parts
        assert "storage" not in parts.partition("not priced")[2], "priced for every row"
    after = shown.set_index("offer_key")["cost"]
    grew = after.map(worse_end_usd) > before.reindex(after.index).map(worse_end_usd)
    assert grew.all(), after[~grew]

    # a link with every input fills the fold as the link says
    link = {"data_tb": "40", "ckpts": "3", "egress_tb": "1.5", "storage_price": "20"}
    link |= {"egress_price": "0.087", "support_pct": "10", "stated_support": "1"}
    restored = open_page(RANK, link)
    assert not restored.exception and not restored.error
    assert "could not be restored" not in text_of(restored)
    widgets = ["dataset_tb", "checkpoints_kept", "egress_tb", "storage_price", "egress_price"]
    assert [restored.number_input(key=f"rk_{w}").value for w in widgets] == [40, 3, 1.5, 20, 0.087]
    assert restored.number_input(key="rk_support_pct").value == 10
    assert restored.checkbox(key="rk_stated_support").value is True


def test_bad_inputs_show_a_message_not_a_traceback(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK, {"objective": "fastest", "gpus": "lots"})
    assert not app.exception
    assert "could not be restored: objective='fastest'" in text_of(app)
    assert any("GPU count 'lots'" in e.value for e in app.error)
    app.text_input(key="rk_gpus").input("16").run()
    app.multiselect(key="rk_tiers").unselect("on_demand").run()
    assert any("at least one pricing tier" in e.value for e in app.error)


def test_an_empty_warehouse_explains_and_a_new_snapshot_shows(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page(RANK)
    assert not app.exception
    assert metric(app, "Offers ranked") == "0"
    assert "No offer qualifies" in text_of(app)
    publish_synthetic(warehouse_path, 30, source="alpha")
    app.run()
    assert not app.exception
    assert int(metric(app, "Offers ranked")) > 0


def test_inputs_are_never_cached_under_another_snapshots_id(warehouse_path):
    current = current_snapshot(warehouse_path).snapshot_id
    assert _inputs(str(warehouse_path), current).snapshot.snapshot_id == current
    with pytest.raises(SnapshotMoved):
        _inputs(str(warehouse_path), current + 1)


def test_a_full_warehouse_with_no_qualifying_offer_gives_the_real_reason(
    use_warehouse, fixture_warehouse
):
    """With offers in the warehouse, "no offer qualifies" names what left most out among
    the offers estimated for the job (reasons alike but for their figures counted as one),
    not "with an empty warehouse, run refresh"."""
    use_warehouse(fixture_warehouse)
    app = open_page(RANK, {"gpus": "8", "budget": "1"})
    assert not app.exception
    assert metric(app, "Offers ranked") == "0"
    text = text_of(app)
    said = re.search(r"Most were left out because: (.+) \(([\d,]+) of ([\d,]+) alike\)", text)
    assert said is not None, text
    assert int(said.group(2).replace(",", "")) > 1
    assert "holds no offers yet" not in text and "empty warehouse" not in text


def test_the_default_view_is_a_plan_a_buyer_would_sign(use_warehouse, fixture_warehouse):
    """The first screen: a job whose best offers finish in weeks, not years, with no
    warning about it, and the sources' state in one line above the answer."""
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    assert not app.exception
    top = rank(fixture_warehouse, request_of(RankView()), AS_OF).offers.iloc[0]
    assert 1 < top["time_to_train_h"] / 24 < 30
    assert not [w for w in app.warning if "year" in w.value]
    # failed refreshes and old data: counted in one line, the details on demand
    [status] = [e for e in app.expander if e.label.startswith("Snapshot ")]
    assert "failed their last refresh" in status.label and "hold old data" in status.label
    assert not [w for w in app.warning if "refresh" in w.value or "Old data" in w.value]


def test_a_plan_past_a_year_or_the_deadline_is_said_above_the_ranking(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    view = RankView(preset="llama3-8b", gpus="32")
    offers = rank(fixture_warehouse, request_of(view), AS_OF).offers
    days = offers["time_to_train_h"] / 24
    assert days.iloc[0] > 365 and days.min() < 365, "the case the warning is for"
    app = open_page(RANK, {"preset": "llama3-8b", "gpus": "32"})
    assert not app.exception
    [said] = [w.value for w in app.warning if "year" in w.value]
    assert said.startswith(f"The top-ranked offer takes {days.iloc[0] / 365:.1f} years")
    assert f"{(days > 365).sum():,} of the {len(days):,} ranked offers take over a year" in said

    # kept for its better end (the fabric unknown), its worse end past the deadline
    deadline = 17
    offers = rank(fixture_warehouse, request_of(RankView(deadline_days=deadline)), AS_OF).offers
    past = (offers["time_to_train_h"] / 24 > deadline).sum()
    assert past > 0, "offers whose range straddles the deadline"
    app = open_page(RANK, {"deadline_days": str(deadline)})
    assert not app.exception
    [said] = [w.value for w in app.warning if "deadline" in w.value]
    assert f"{past:,} of the {len(offers):,} ranked offers may miss your {deadline}-day" in said


def test_an_offer_is_starred_in_the_grid_and_the_stars_are_capped(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    shown = offers_shown(app)
    assert "starred" not in shown.columns, "no box that looks clickable and is not"
    keys = list(shown["offer_key"])
    tick(app, [keys[3]])
    assert not app.exception
    assert url_values(app, "star") == [keys[3]]
    assert any("Open the shortlist (1 starred)" in link.label for link in app.get("page_link"))
    tick(app, [keys[3], keys[1]])
    assert url_values(app, "star") == [keys[3], keys[1]], "a new star follows the old ones"
    # ticking every row (the grid's "select all") stars no more than a shortlist holds
    tick(app, keys)
    assert not app.exception
    assert url_values(app, "star") == [keys[3], keys[1], *keys[0:1], *keys[2:3], *keys[4:20]]
    assert len(ticked(app)) == MAX_STARS
    assert any(f"at most {MAX_STARS} offers" in w.value for w in app.warning)


def test_the_default_view_is_served_from_the_stored_ranking_as_it_would_be_ranked(
    use_warehouse, fixture_warehouse, monkeypatch
):
    """The refresh stored the default view's ranking: the page serves it (and says so), and
    the page ranked live shows the very same tables."""
    use_warehouse(fixture_warehouse)
    served, live = served_as_ranked_live(monkeypatch)
    assert metric(served, "Offers ranked") == metric(live, "Offers ranked")
