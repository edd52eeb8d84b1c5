"""The fabric "what if" in the Rank page's Serve mode (issue 36): the same choice as Train
mode, the table of `rank --serve --what-if-fabric`'s numbers, its caption, and the URL."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
from streamlit.testing.v1 import AppTest

from fabricscope.app.rank_form import NO_WHAT_IF
from fabricscope.app.view_state import (
    RankView,
    ServingFields,
    request_of,
    serving_preset,
    to_query_params,
)
from fabricscope.rank.ranking import rank, what_if_changes, what_if_rule, what_if_summary
from tests.helpers import AS_OF
from tests.ui.apptest import open_page, text_of, url_values

RANK = "pages/rank.py"
ONE_NODE = "the fabric does not matter: fits one node"
# DeepSeek-V3 served attention data-parallel: on H100s a replica's experts span nodes
EXPERTS = RankView(
    mode="serve",
    serve_preset="deepseek-v3-chat",
    serve_custom=replace(
        ServingFields.of(serving_preset("deepseek-v3-chat")),
        attention_data_parallel=True,
        requests_per_s=20.0,
    ),
    what_if="ethernet",
)


def what_if_shown(app: AppTest) -> pd.DataFrame:
    """The Serve mode's what-if table (output tokens/s per GPU now and with the fabric)."""
    [table] = [f.value for f in app.dataframe if "tokens_what_if" in f.value.columns]
    return table


def test_a_link_opens_the_serving_what_if_with_the_clis_numbers(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK, to_query_params(EXPERTS))
    assert not app.exception and not app.error
    assert app.radio(key="rk_mode").value == "serve"
    assert app.selectbox(key="rk_what_if").value == "ethernet"
    assert url_values(app, "what_if") == ["ethernet"]
    base = rank(fixture_warehouse, request_of(EXPERTS), AS_OF)
    expected = what_if_changes(base, base.what_if("ethernet"))
    shown = what_if_shown(app)
    assert list(shown["offer_key"]) == list(expected["offer_key"])
    for name in ("tokens_change", "usd_per_million_change", "fabric_share_what_if"):
        assert shown[name].fillna(-1.0).tolist() == expected[name].fillna(-1.0).tolist(), name
    spanning = shown[shown["tokens_change"].fillna(0.0) < 0]
    assert len(spanning) and spanning["verdict_what_if"].str.startswith("multi-node").all()
    assert (spanning["usd_per_million_what_if"] > spanning["usd_per_million_now"]).all()
    assert spanning["fabric_what_if"].str.startswith("ethernet at 12.5 Gb/s").any()
    one_node = shown[shown["verdict_what_if"] == ONE_NODE]
    assert len(one_node) and (one_node["tokens_change"] == 0).all()
    assert (one_node["tokens_now"] == one_node["tokens_what_if"]).all()
    text = text_of(app)
    assert what_if_summary(expected, "ethernet", "serving") in text
    assert what_if_rule("ethernet", kind="serving") in text
    assert "A served model crosses the fabric only where a replica spans nodes" in text


def test_a_model_inside_one_node_reads_the_same_on_the_fabric_chosen(
    use_warehouse, fixture_warehouse
):
    """The default Serve view (Llama 3 70B, one node per replica): choosing a fabric shows
    every offer unchanged, says so in one sentence, and puts the choice in the URL."""
    use_warehouse(fixture_warehouse)
    app = open_page(RANK, {"mode": "serve"})
    assert not app.exception and not app.error
    assert app.selectbox(key="rk_what_if").value == NO_WHAT_IF
    assert not [f for f in app.dataframe if "tokens_what_if" in f.value.columns]
    app.selectbox(key="rk_what_if").select("infiniband").run()
    assert not app.exception and not app.error
    assert url_values(app, "what_if") == ["infiniband"]
    shown = what_if_shown(app)
    assert len(shown) > 10
    assert (shown["tokens_change"] == 0).all() and (shown["usd_per_million_change"] == 0).all()
    assert set(shown["verdict_what_if"]) == {ONE_NODE}
    assert f"0 of {len(shown):,} offers change with infiniband" in text_of(app)
