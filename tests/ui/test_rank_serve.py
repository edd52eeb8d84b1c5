"""The Rank page's Serve mode on a real warehouse: the switch, a serving preset ranked as
`rank --serve` ranks it, the serving columns, the verdict of a model that fits one node, a
field the model refuses, and the URL round trip (Train mode's links unchanged)."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from fabricscope.app.rank_data import ms, usd
from fabricscope.app.rank_form import NO_DEADLINE, NO_WHAT_IF
from fabricscope.app.view_state import (
    DEFAULT_SERVE_GPUS,
    RankView,
    ServingFields,
    from_query_params,
    request_of,
    serving_preset,
    to_query_params,
)
from fabricscope.model.workloads import serving_presets
from fabricscope.rank.ranking import rank
from tests.helpers import AS_OF
from tests.ui.apptest import (
    captured_downloads,
    download_data,
    open_page,
    served_as_ranked_live,
    text_of,
    tick,
    ticked,
    url_values,
)

RANK = "pages/rank.py"
SERVE = RankView(mode="serve")
FITS_ONE_NODE = "the fabric does not matter: fits one node"


def served_offers(app: AppTest) -> pd.DataFrame:
    """The Serve mode's ranked offers table (an offer_key and a TPOT column)."""
    [table] = [f for f in app.dataframe if {"offer_key", "tpot"} <= set(f.value.columns)]
    return table


def labels(table: object) -> dict[str, str]:
    """Each column's header as the grid shows it."""
    config = json.loads(table.proto.columns)  # type: ignore[attr-defined]
    return {name: column.get("label", name) for name, column in config.items()}


def metric(app: AppTest, label: str) -> str:
    return {m.label: m.value for m in app.metric}[label]


def serving(app: AppTest) -> AppTest:
    app.radio(key="rk_mode").set_value("serve").run()
    assert not app.exception and not app.error
    return app


def test_the_switch_to_serve_ranks_the_serving_preset_without_deadline(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    assert app.radio(key="rk_mode").value == "train"
    assert app.title[0].value == "Rank offers for a training job"
    serving(app)
    assert app.title[0].value == "Rank offers for serving a model"
    assert url_values(app, "mode") == ["serve"]
    assert app.text_input(key="rk_serve_gpus").value == DEFAULT_SERVE_GPUS == "1-1024"
    preset = serving_presets()[SERVE.serve_preset]
    assert app.selectbox(key="rk_serve_preset").value == SERVE.serve_preset
    text = text_of(app)
    assert preset["description"] in text and preset["source"] in text
    # no deadline, said in one line; the fabric "what if" as in Train mode
    # (tests/ui/test_rank_serve_what_if.py)
    with pytest.raises(KeyError):
        app.number_input(key="rk_deadline_days")
    assert app.selectbox(key="rk_what_if").value == NO_WHAT_IF
    assert NO_DEADLINE in text
    # the whole cost's fold: a served model keeps its weights on storage, no checkpoints
    with pytest.raises(KeyError):
        app.number_input(key="rk_checkpoints_kept")
    assert "storage holds the served weights" in text
    assert "A served model crosses the fabric only where a replica spans nodes" in text
    # the ranking is `rank --serve`'s, with its note
    expected = rank(fixture_warehouse, request_of(SERVE), AS_OF)
    assert len(expected.offers) > 10
    shown = served_offers(app).value
    assert list(shown["offer_key"]) == list(expected.offers["offer_key"])
    assert metric(app, "Offers ranked") == f"{len(expected.offers):,}"
    assert metric(app, "Excluded") == f"{len(expected.excluded):,}"
    job = request_of(SERVE).workload
    assert (
        f"{job.input_tokens:,} prompt and {job.output_tokens:,} output tokens per request; "
        f"{job.requests_per_s:g} requests/s "
        f"({job.requests_per_s * job.output_tokens:,.0f} output tokens/s); "
        f"TTFT {job.ttft_ms:,g} ms, TPOT {job.tpot_ms:,g} ms"
    ) in text
    assert f"for {job.hours:,g} hours" in text and "Each offer is ranked at the fewest" in text
    # the providers' best offers, and every excluded offer with its reason
    [providers] = [f.value for f in app.dataframe if "best_offer" in f.value.columns]
    assert "tpot" in providers.columns and "time_to_train" not in providers.columns
    assert list(providers["provider"]) == list(expected.providers["provider"])
    assert any(
        e.label.startswith(f"Excluded offers ({len(expected.excluded):,})") for e in app.expander
    )
    # TPOT against cost (the training step's parts stay in Train mode), the axis its own
    [chart] = app.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    axes = [layer["encoding"]["x"]["title"] for layer in spec["layer"]]
    assert set(axes) == {"Time per output token (ms, log)"}


def test_the_serving_table_shows_cost_per_million_tokens_latency_and_load(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = serving(open_page(RANK))
    table = served_offers(app)
    shown = table.value
    headers = labels(table)
    head = ["rank", "provider", "offer_label", "gpu_model", "gpus"]
    serving_columns = [
        "usd_per_million_output_tokens",
        "usd_per_million_input_tokens",
        "tpot",
        "ttft",
        "requests_per_s",
        # the tokens/s per GPU, its error band held out and the tokens/s and price at the
        # band's ends (tests/ui/test_rank_serve_error_band.py)
        "tokens_per_s_per_gpu",
        "error_band",
        "tokens_band",
        "usd_band",
        "layout",
        "cost",
        "price_usd_per_gpu_hour",
        "price_from",
        "verdict",
        "fabric_estimated_as",
    ]
    assert list(shown.columns[: len(head) + len(serving_columns)]) == head + serving_columns
    assert [headers[c] for c in serving_columns[:5]] == [
        "USD/M out",
        "USD/M in",
        "TPOT (ms)",
        "TTFT (ms)",
        "req/s carried",
    ]
    assert headers["cost"] == "whole cost (USD)" and headers["offer_label"] == "offer"
    config = json.loads(table.proto.columns)
    assert config["usd_per_million_output_tokens"]["type_config"]["format"] == "%.3f"
    assert config["usd_per_million_input_tokens"]["type_config"]["format"] == "%.3f"

    offers = rank(fixture_warehouse, request_of(SERVE), AS_OF).offers
    for column in ("usd_per_million_output_tokens", "usd_per_million_input_tokens"):
        assert shown[column].to_numpy() == pytest.approx(offers[column].astype(float).to_numpy())
    assert (shown["usd_per_million_output_tokens"] > 0).all()
    assert list(shown["ttft"]) == [ms(v) for v in offers["ttft_ms"]]
    assert shown["requests_per_s"].to_numpy() == pytest.approx(
        offers["capacity_requests_per_s"].to_numpy()
    )
    assert (shown["requests_per_s"] >= request_of(SERVE).workload.requests_per_s).all()
    assert list(shown["layout"]) == list(offers["layout"])
    assert shown["layout"].str.match(r"TP\d+ x PP\d+, batch \d+").all()
    assert list(shown["verdict"]) == list(offers["verdict"])
    for cost, low, high in zip(
        shown["cost"], offers["total_cost_usd_low"], offers["total_cost_usd"], strict=True
    ):
        assert cost.startswith(usd(high, low))
    # TPOT: a range where the fabric is unknown and moves it, one number where it does not
    for text, low, high in zip(
        shown["tpot"], offers["tpot_ms_low"], offers["tpot_ms"], strict=True
    ):
        assert text.startswith(ms(high, low))
        assert ("–" in text) == (ms(low) != ms(high))


def test_a_model_that_fits_one_node_says_the_fabric_does_not_matter(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = serving(open_page(RANK))
    app.selectbox(key="rk_serve_preset").select("llama3-8b-chat").run()
    assert not app.exception and not app.error
    assert url_values(app, "serve_preset") == ["llama3-8b-chat"]
    assert "Llama 3 8B chat (bf16)" in text_of(app)
    view = replace(SERVE, serve_preset="llama3-8b-chat")
    expected = rank(fixture_warehouse, request_of(view), AS_OF).offers
    shown = served_offers(app).value
    assert list(shown["offer_key"]) == list(expected["offer_key"])
    assert len(shown) > 10 and (shown["verdict"] == FITS_ONE_NODE).all()
    assert not shown["tpot"].str.contains("–").any(), "one node: the fabric moves no TPOT"
    # a model that spans nodes on some offers says what the fabric costs it there
    app.selectbox(key="rk_serve_preset").select("llama3-405b-bf16").run()
    assert not app.exception and not app.error
    verdicts = served_offers(app).value["verdict"]
    assert verdicts.str.startswith("multi-node serving: the fabric costs").any()


def test_a_field_the_model_refuses_is_one_line_and_the_ranking_stays(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = serving(open_page(RANK))
    before = served_offers(app).value
    app.toggle(key="rk_serve_custom").set_value(True).run()
    fields = ServingFields.of(serving_preset(SERVE.serve_preset))
    assert app.number_input(key="rk_s_output_tokens").value == fields.output_tokens
    assert app.selectbox(key="rk_s_architecture").value == fields.architecture
    app.number_input(key="rk_s_output_tokens").set_value(0).run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert "\n" not in error
    assert error == (
        "Cannot rank these inputs: custom serving workload: output_tokens: "
        "Input should be greater than 0"
    )
    pd.testing.assert_frame_equal(served_offers(app).value, before, check_dtype=False)
    assert "the last ranking these inputs made" in text_of(app)
    assert url_values(app, "s_output_tokens") == ["0"], "the URL says what was asked"
    # put right, it ranks again: the preset's own answer
    app.number_input(key="rk_s_output_tokens").set_value(fields.output_tokens).run()
    assert not app.exception and not app.error
    pd.testing.assert_frame_equal(served_offers(app).value, before, check_dtype=False)
    # a link with the refused value opens on the error, without a traceback
    link = open_page(RANK, {"mode": "serve", "s_custom": "1", "s_output_tokens": "0"})
    assert not link.exception
    assert [e.value for e in link.error] == [error]


def test_a_serving_view_survives_its_url_and_train_links_are_unchanged(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    base = ServingFields.of(serving_preset("llama3-70b-interactive"))
    view = RankView(
        mode="serve",
        serve_preset="llama3-70b-interactive",
        serve_custom=replace(base, requests_per_s=None, ttft_ms=900.0, hours=2000.0),
        serve_gpus="8-64",
        tiers=("on_demand", "spot"),
        objective="time",
        min_fabric="roce",
        max_budget_usd=5e5,
    )
    params = to_query_params(view)
    assert params["s_requests_per_s"] == "none" and params["mode"] == "serve"
    assert from_query_params({k: v if isinstance(v, list) else [v] for k, v in params.items()}) == (
        view,
        [],
    )
    # a Train-mode view's link says nothing of serving, and reads back as before
    train = RankView(preset="llama3-70b", gpus="64-512", deadline_days=30.0)
    assert to_query_params(train) == {
        "preset": "llama3-70b",
        "gpus": "64-512",
        "deadline_days": "30",
    }

    app = open_page(RANK, params)
    assert not app.exception and not app.error
    assert "could not be restored" not in text_of(app)
    assert app.radio(key="rk_mode").value == "serve"
    assert app.selectbox(key="rk_serve_preset").value == "llama3-70b-interactive"
    assert app.toggle(key="rk_serve_custom").value is True
    assert app.number_input(key="rk_s_requests_per_s").value is None
    assert app.number_input(key="rk_s_ttft_ms").value == 900
    assert app.number_input(key="rk_s_hours").value == 2000
    assert app.text_input(key="rk_serve_gpus").value == "8-64"
    assert app.multiselect(key="rk_tiers").value == ["on_demand", "spot"]
    assert app.radio(key="rk_objective").value == "time"
    expected = rank(fixture_warehouse, request_of(view), AS_OF).offers
    assert len(expected) > 0
    assert list(served_offers(app).value["offer_key"]) == list(expected["offer_key"])
    assert "no load given" in text_of(app) and "TTFT 900 ms" in text_of(app)
    assert {k: url_values(app, k) for k in params} == {
        k: v if isinstance(v, list) else [v] for k, v in params.items()
    }

    # back to Train: the training job the link held, ranked as before
    app.radio(key="rk_mode").set_value("train").run()
    assert not app.exception and not app.error
    assert app.title[0].value == "Rank offers for a training job"
    assert app.text_input(key="rk_gpus").value == "512"
    assert "mode" not in app.query_params
    training = rank(fixture_warehouse, request_of(replace(view, mode="train")), AS_OF).offers
    [grid] = [
        f.value
        for f in app.dataframe
        if "time_to_train" in f.value.columns
        and "rank" in f.value.columns
        and "offer_key" in f.value.columns
    ]
    assert list(grid["offer_key"]) == list(training["offer_key"])


def test_a_mix_a_percentile_and_disaggregation_are_asked_ranked_and_linked(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = serving(open_page(RANK))
    app.toggle(key="rk_serve_custom").set_value(True).run()
    assert app.selectbox(key="rk_s_latency_percentile").value == "p99"
    assert app.checkbox(key="rk_s_disaggregated").value is False
    assert app.text_input(key="rk_s_mix").value == ""
    app.selectbox(key="rk_s_latency_percentile").set_value("p50").run()
    app.checkbox(key="rk_s_disaggregated").check().run()
    app.text_input(key="rk_s_mix").input("500/100:0.75,8000/1000:0.25").run()
    assert not app.exception and not app.error
    said = text_of(app)
    assert "75% 500/100, 25% 8,000/1,000" in said and "latencies at p50" in said
    assert "prefill and decode on separate GPUs" in said
    view = replace(
        SERVE,
        serve_custom=replace(
            ServingFields.of(serving_preset(SERVE.serve_preset)),
            latency_percentile="p50",
            disaggregated=True,
            mix="500/100:0.75,8000/1000:0.25",
        ),
    )
    expected = rank(fixture_warehouse, request_of(view), AS_OF).offers
    assert list(served_offers(app).value["offer_key"]) == list(expected["offer_key"])
    assert url_values(app, "s_disaggregated") == ["1"]
    assert url_values(app, "s_mix") == ["500/100:0.75,8000/1000:0.25"]
    params = to_query_params(view)
    assert from_query_params({k: [v] for k, v in params.items()}) == (view, [])
    # a malformed mix is one line, and the ranking stays
    before = served_offers(app).value
    app.text_input(key="rk_s_mix").input("500:1").run()
    assert not app.exception
    [error] = [e.value for e in app.error]
    assert error == (
        "Cannot rank these inputs: mix: '500:1' is not prompt/output:share (e.g. 500/100:0.75)"
    )
    pd.testing.assert_frame_equal(served_offers(app).value, before, check_dtype=False)


def test_served_offers_starred_in_the_grid_reach_the_serving_shortlist(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    result = rank(fixture_warehouse, request_of(SERVE), AS_OF)
    keys = list(result.offers["offer_key"].iloc[[0, 2]])
    with captured_downloads() as downloads:
        app = serving(open_page(RANK))
        tick(app, keys)  # the two offers' boxes in the grid of served offers
        assert not app.exception and not app.error
        assert url_values(app, "star") == keys and url_values(app, "mode") == ["serve"]
        assert any("Open the shortlist (2 starred)" in link.label for link in app.get("page_link"))
        app.switch_page("pages/shortlist.py")
        app.run()
        assert not app.exception and not app.error
        assert app.multiselect(key="sl_starred").value == keys
        shown = next(f.value for f in app.dataframe if "offer_key" in f.value.columns)
        assert list(shown["offer_key"]) == keys
        assert {"usd_per_million_output_tokens", "tpot", "ttft"} <= set(shown.columns)
        assert "No curve for a served model" in text_of(app)
        csv = download_data(app, "sl_csv", downloads)
    # the CSV is the serving ranking's rows, every serving column, as `rank --serve` gives
    # them (values compared: the stored ranking writes whole counts without a ".0")
    rows = result.offers[result.offers["offer_key"].isin(keys)][list(result.columns)]
    got = pd.read_csv(io.BytesIO(csv))
    want = pd.read_csv(io.StringIO(rows.to_csv(index=False)))
    assert list(got.columns) == list(result.columns)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    # back on the Rank page, still serving, the stars ticked
    app.switch_page(RANK)
    app.run()
    assert app.radio(key="rk_mode").value == "serve"
    assert ticked(app) == keys


def test_the_default_serving_view_is_served_from_the_stored_ranking_as_it_would_be_ranked(
    use_warehouse, fixture_warehouse, monkeypatch
):
    """The refresh stores the default serving preset's ranking (fabricscope/rank/rankings.json):
    Serve mode serves it and says so, and ranked live shows the very same tables."""
    use_warehouse(fixture_warehouse)
    served, live = served_as_ranked_live(monkeypatch, {"mode": "serve"})
    assert served.title[0].value == live.title[0].value == "Rank offers for serving a model"
    assert metric(served, "Offers ranked") == metric(live, "Offers ranked")


def test_a_bad_serving_link_keeps_the_rest_and_says_what_it_dropped():
    view, problems = from_query_params(
        {
            "mode": ["fly"],
            "serve_preset": ["gpt5-chat"],
            "serve_gpus": ["8-64"],
            "s_custom": ["1"],
            "s_weights": ["fp2"],
        }
    )
    assert view == RankView(serve_gpus="8-64")
    assert problems == [
        "mode='fly': the mode is one of train, serve",
        "serve_preset='gpt5-chat' is not a serving preset",
        "custom serving workload: weights 'fp2' is not one of bf16, fp8, fp4, int4",
    ]
    view, problems = from_query_params({"mode": ["serve"], "s_custom": ["1"], "s_hours": ["x"]})
    assert view == SERVE and problems == ["custom serving workload: s_hours='x' is not a number"]
