"""Every page of the app through streamlit.testing, on real warehouse files."""

from __future__ import annotations

import json
from datetime import timedelta

import pyarrow as pa
import pytest

from fabricscope.warehouse.db import current_snapshot
from fabricscope.warehouse.models import RunStatus
from tests.helpers import publish_synthetic
from tests.ui.apptest import PAGES, open_page, text_of

OVERVIEW = "pages/overview.py"
# pages that show tables before any interaction (Calibrate waits for an upload, Shortlist
# for a star)
TABLE_PAGES = [
    p for p in PAGES if p not in ("pages/sql.py", "pages/calibrate.py", "pages/shortlist.py")
]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_a_populated_warehouse(use_warehouse, warehouse_path, page):
    use_warehouse(warehouse_path)
    publish_synthetic(warehouse_path, 30, source="alpha")
    app = open_page(page)
    assert not app.exception
    snapshot = current_snapshot(warehouse_path)
    if page != "pages/sql.py":
        assert f"Snapshot {snapshot.snapshot_id}" in text_of(app)
    if page in TABLE_PAGES:
        assert app.dataframe, "the page should show real tables"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_the_fixture_warehouse(use_warehouse, fixture_warehouse, page):
    use_warehouse(fixture_warehouse)
    app = open_page(page)
    assert not app.exception
    assert not app.error
    if page in TABLE_PAGES:
        assert app.dataframe


def test_overview_shows_the_reference_content_of_a_fresh_warehouse(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page(OVERVIEW)
    assert not app.exception
    metrics = {m.label: m.value for m in app.metric}
    assert int(metrics["GPU models known"]) >= 20
    assert "No scrape has run yet" in text_of(app)
    fabric_table = app.dataframe[-1].value
    assert "InfiniBand" in " ".join(fabric_table["display_name"])


@pytest.mark.parametrize("page", PAGES)
def test_a_missing_warehouse_explains_how_to_build_it(use_warehouse, tmp_path, page):
    use_warehouse(tmp_path / "data" / "warehouse.duckdb")
    app = open_page(page)
    assert not app.exception
    assert "fabricscope init" in text_of(app)
    assert [b.label for b in app.button] == ["Build the warehouse now"]


def test_the_build_button_builds_the_warehouse(use_warehouse, tmp_path):
    path = use_warehouse(tmp_path / "data" / "warehouse.duckdb")
    app = open_page(OVERVIEW)
    app.button[0].click().run()
    assert not app.exception
    assert current_snapshot(path) is not None
    assert any(m.label == "GPU models known" for m in app.metric)


@pytest.mark.parametrize("page", [p for p in PAGES if p != "pages/sql.py"])
def test_a_stale_source_is_flagged(use_warehouse, warehouse_path, page):
    use_warehouse(warehouse_path)
    publish_synthetic(warehouse_path, 5, source="old_source", age=timedelta(days=30))
    publish_synthetic(warehouse_path, 5, source="fresh_source")
    publish_synthetic(warehouse_path, 5, source="broken_source")
    publish_synthetic(warehouse_path, 0, source="broken_source", status=RunStatus.FAILED)
    app = open_page(page)
    assert not app.exception
    # one line above the page, no warning boxes: the counts, told apart
    assert not app.warning
    [status] = [e for e in app.expander if e.label.startswith("Snapshot ")]
    assert "1 source failed its last refresh · 1 source holds old data" in status.label
    # the details open from it, each source under its own paragraph
    failed, old = (e.value for e in status.markdown)
    assert failed.startswith("**The last refresh failed for 1 of") and "broken_source" in failed
    assert "synthetic failure" in failed  # its error
    assert old.startswith("**Old data: 1 of") and "old_source (30 d)" in old
    assert "fresh_source" not in failed + old and "broken_source" not in old


def test_a_fresh_warehouse_says_its_snapshot_in_a_plain_line(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    publish_synthetic(warehouse_path, 5, source="fresh_source")
    app = open_page(OVERVIEW)
    assert not app.exception and not app.warning
    assert not [e for e in app.expander if e.label.startswith("Snapshot ")]
    assert any(c.value.startswith("Snapshot ") for c in app.caption)


def test_sql_page_runs_a_query_and_refuses_a_hostile_one(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    publish_synthetic(warehouse_path, 12, source="alpha")
    app = open_page("pages/sql.py")
    app.text_area(key="sql_query").input("select count(*) as n from offers_current").run()
    app.button[0].click().run()
    assert not app.exception
    assert int(app.dataframe[0].value["n"][0]) == 12
    app.text_area(key="sql_query").input("copy offers_history to 'leak.csv'").run()
    app.button[0].click().run()
    assert not app.exception
    assert any("Refused" in e.value for e in app.error)


def test_a_new_snapshot_shows_without_restarting(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page(OVERVIEW)
    assert {m.label: m.value for m in app.metric}["Current offers"] == "0"
    publish_synthetic(warehouse_path, 7, source="alpha")
    app.run()
    assert {m.label: m.value for m in app.metric}["Current offers"] == "7"


def test_offers_page_filters_by_provider(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    publish_synthetic(warehouse_path, 20, source="alpha")
    app = open_page("pages/offers.py")
    assert not app.exception
    assert len(app.dataframe[0].value) == 20
    app.multiselect[2].select("spot").run()
    shown = app.dataframe[0].value
    assert 0 < len(shown) < 20 and set(shown["pricing_tier"]) == {"spot"}


def test_the_reference_page_plots_every_gpu_with_specs(use_warehouse, warehouse_path):
    use_warehouse(warehouse_path)
    app = open_page("pages/reference.py")
    assert not app.exception
    [chart] = app.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    assert (spec["encoding"]["x"]["title"], spec["encoding"]["y"]["title"]) == (
        "Memory per GPU (GB)",
        "BF16 dense TFLOP/s",
    )
    [dataset] = chart.proto.datasets
    plotted = pa.ipc.open_stream(dataset.data.data).read_all().to_pandas()
    # one point per GPU model whose memory and BF16 peak gpus.csv states, and no other
    [gpus] = [frame.value for frame in app.dataframe if "gpu_model" in frame.value.columns]
    stated = gpus.dropna(subset=["bf16_dense_tflops", "memory_gb"])
    assert len(stated) > 10
    assert sorted(plotted["gpu_model"]) == sorted(stated["gpu_model"])


def test_offers_open_on_what_a_training_buyer_would_rent(use_warehouse, fixture_warehouse):
    """Not on $0.05 spot V100s: on-demand offers that cluster, cheapest compute first."""
    use_warehouse(fixture_warehouse)
    app = open_page("pages/offers.py")
    assert not app.exception
    shown = app.dataframe[0].value
    assert "sorted for training" in text_of(app)
    head = shown.head(20)
    assert (head["pricing_tier"] == "on_demand").all() and (head["multi_node"] == "yes").all()
    capable = shown[(shown["pricing_tier"] == "on_demand") & (shown["multi_node"] == "yes")]
    assert capable.index.max() == len(capable) - 1, "they lead the table"
    compute = capable["usd_per_bf16_pflop_hour"].dropna()
    assert compute.is_monotonic_increasing
    assert list(shown["pricing_tier"]).index("spot") > list(shown["pricing_tier"]).index(
        "on_demand"
    )
    assert shown["pricing_tier"].iloc[-1] in ("spot", "dynamic")
