"""The Rank page's Serve mode shows the serving model's held-out error beside each offer's
tokens/s and price per token (fabricscope/model/error_bands.py, SERVING), and says what each
band means."""

from __future__ import annotations

from fabricscope.app.rank_data import tokens_band_text, usd_band_text
from fabricscope.app.view_state import request_of
from fabricscope.model.error_bands import SERVING, band_text, notes
from fabricscope.rank.ranking import rank
from tests.helpers import AS_OF
from tests.ui.apptest import open_page, text_of
from tests.ui.test_rank_serve import RANK, SERVE, labels, served_offers, serving


def test_the_serve_table_shows_each_offers_error_band_and_its_meaning(
    use_warehouse, fixture_warehouse
):
    use_warehouse(fixture_warehouse)
    app = serving(open_page(RANK))
    table = served_offers(app)
    headers = labels(table)
    assert headers["error_band"] == "error band (held out)"
    assert headers["tokens_band"] == "output tokens/s per GPU, with the error band"
    assert headers["usd_band"] == "USD/M out, with the error band"
    shown = table.value.set_index("offer_key")
    expected = rank(fixture_warehouse, request_of(SERVE), AS_OF).offers
    assert expected["error_band_pct"].notna().all()
    for _, row in expected.head(20).iterrows():
        key = row["offer_key"]
        assert shown.loc[key, "error_band"] == band_text(
            row["error_band_pct"], row["error_band_cell"], row["error_band_runs"]
        )
        assert shown.loc[key, "error_band"].startswith(f"±{row['error_band_pct']:.0f}% (")
        assert shown.loc[key, "tokens_band"] == tokens_band_text(row)
        assert shown.loc[key, "usd_band"] == usd_band_text(row)
        assert "–" in shown.loc[key, "tokens_band"]  # a band under 100%: both ends
    # each band shown is said in words once, as a served model's: of its tokens/s
    page = " ".join(text_of(app).split())
    assert "How far to trust the tokens/s and the price per token" in page
    for note in notes(expected.to_dict("records"), SERVING):
        assert f"{note[0].upper()}{note[1:]}." in page
    assert "Output tokens/s per GPU at the latency target typically within" in page
    providers = next(f for f in app.dataframe if "best_rank" in f.value.columns)
    assert providers.value["error_band"].str.startswith("±").all()
    assert labels(providers)["error_band"] == "error band (held out)"
