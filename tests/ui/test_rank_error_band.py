"""The Rank page's training tables show the model's held-out error beside each time and cost
(fabricscope/model/error_bands.py), and say what each band means."""

from __future__ import annotations

from fabricscope.app.rank_data import duration
from fabricscope.app.view_state import RankView, request_of
from fabricscope.model.error_bands import notes
from fabricscope.rank.ranking import rank
from tests.helpers import AS_OF
from tests.ui.apptest import open_page, text_of
from tests.ui.test_rank_page import RANK, offers_shown


def test_every_time_and_cost_has_its_error_band_and_its_meaning(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(RANK)
    assert not app.exception and not app.error
    shown = offers_shown(app).set_index("offer_key")
    expected = rank(fixture_warehouse, request_of(RankView()), AS_OF).offers
    assert expected["error_band_pct"].notna().all()
    for _, row in expected.head(20).iterrows():
        band = shown.loc[row["offer_key"], "error_band"]
        assert band == (
            f"±{row['error_band_pct']:.0f}% ({row['error_band_cell']}, "
            f"{row['error_band_runs']} runs held out)"
        )
        # the time at the band's ends: the better fabric end less it, the worse end plus it
        assert shown.loc[row["offer_key"], "time_band"] == duration(
            row["time_to_train_h_band_high"], row["time_to_train_h_band_low"]
        )
    # each band shown is said in words once, with its percentile, runs and bias
    page = " ".join(text_of(app).split())
    for note in notes(expected.to_dict("records")):
        assert f"{note[0].upper()}{note[1:]}." in page
    assert "the p90 of the held-out errors on" in page
    providers = next(f.value for f in app.dataframe if "best_rank" in f.value.columns)
    assert providers["error_band"].str.startswith("±").all()
