"""Stars on the Rank page become the Shortlist, whose downloads are the ranking rows."""

from __future__ import annotations

import io

import openpyxl
import pandas as pd
import pytest

from fabricscope.app import shortlist_files
from fabricscope.app.view_state import RankView, request_of
from fabricscope.procurement import shortlist as shortlisting
from fabricscope.rank.ranking import RANKED_COLUMNS, rank
from tests.helpers import AS_OF
from tests.ui.apptest import (
    captured_downloads,
    download_data,
    open_page,
    text_of,
    tick,
    ticked,
    url_values,
)

SHORTLIST = "pages/shortlist.py"


@pytest.fixture(scope="module")
def fixture_ranking(fixture_warehouse):
    return rank(fixture_warehouse, request_of(RankView()), AS_OF)


def test_starred_offers_reach_the_shortlist_and_its_csv_is_the_ranking_rows(
    use_warehouse, fixture_warehouse, fixture_ranking
):
    use_warehouse(fixture_warehouse)
    keys = list(fixture_ranking.offers["offer_key"].iloc[[0, 2]])
    with captured_downloads() as downloads:
        app = open_page("pages/rank.py")
        tick(app, keys)  # the two offers' boxes in the grid of ranked offers
        assert not app.exception
        assert url_values(app, "star") == keys
        app.switch_page(SHORTLIST)
        app.run()
        assert not app.exception and not app.error
        assert app.multiselect(key="sl_starred").value == keys
        shown = next(f.value for f in app.dataframe if "offer_key" in f.value.columns)
        assert list(shown["offer_key"]) == keys
        csv = download_data(app, "sl_csv", downloads)
    rows = fixture_ranking.offers[fixture_ranking.offers["offer_key"].isin(keys)]
    assert csv.decode() == rows[RANKED_COLUMNS].to_csv(index=False)
    assert [b.label for b in app.download_button] == [
        "CSV (the ranking rows)",
        "XLSX workbook",
        "Markdown memo",
        "Answers template (CSV)",
    ]
    assert url_values(app, "star") == keys, "the shortlist's URL reproduces it too"


def test_a_star_removed_on_the_shortlist_is_unticked_on_the_rank_page(
    use_warehouse, fixture_warehouse, fixture_ranking
):
    use_warehouse(fixture_warehouse)
    keys = list(fixture_ranking.offers["offer_key"].iloc[[1, 4]])
    app = open_page("pages/rank.py")
    tick(app, keys)
    app.switch_page(SHORTLIST)
    app.run()
    app.multiselect(key="sl_starred").unselect(keys[0]).run()
    app.switch_page("pages/rank.py")
    app.run()
    assert not app.exception
    assert ticked(app) == keys[1:] and url_values(app, "star") == keys[1:]


def test_a_shortlist_link_opens_on_the_shortlist(use_warehouse, fixture_warehouse):
    view = RankView(preset="llama3-70b", gpus="128")
    offers = rank(fixture_warehouse, request_of(view), AS_OF).offers
    keys = list(offers["offer_key"].head(2))
    use_warehouse(fixture_warehouse)
    app = open_page(
        SHORTLIST, {"preset": "llama3-70b", "gpus": "128", "star": [*keys, "gone/x/-/spot"]}
    )
    assert not app.exception and not app.error
    assert "Llama 3 70B" in text_of(app)
    assert "not in the ranking: gone/x/-/spot" in text_of(app)
    shown = next(f.value for f in app.dataframe if "offer_key" in f.value.columns)
    assert list(shown["offer_key"]) == keys
    app.multiselect(key="sl_starred").unselect(keys[0]).run()
    shown = next(f.value for f in app.dataframe if "offer_key" in f.value.columns)
    assert list(shown["offer_key"]) == keys[1:]
    assert keys[0] not in url_values(app, "star")


def test_nothing_starred_says_where_to_star(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page(SHORTLIST)
    assert not app.exception
    assert "Nothing starred yet" in text_of(app)


def test_notes_reach_the_workbook_and_the_memo(fixture_ranking, tmp_path):
    keys = list(fixture_ranking.offers["offer_key"].head(2))
    chosen = shortlisting.from_result(fixture_ranking, offer_keys=keys)
    edited = shortlist_files.notes_frame(chosen, {})
    edited.loc[keys[1], "note"] = "  ask about the IB rail layout "
    notes = shortlist_files.merge_notes({"stale/key": "kept"}, edited)
    assert notes == {"stale/key": "kept", keys[1]: "ask about the IB rail layout"}

    files = shortlist_files.downloads(chosen, notes)
    assert files.csv == shortlisting.csv_frame(chosen).to_csv(index=False).encode()
    assert "## Reviewer notes" in files.memo and "ask about the IB rail layout" in files.memo
    assert files.memo.startswith(shortlisting.memo(chosen).split("\n", 1)[0])
    book = openpyxl.load_workbook(io.BytesIO(files.xlsx))
    assert {"shortlist", "details", "assumptions", "notes"} <= set(book.sheetnames)
    # the offer key is an identifier, not a deciding column: it stands on the details sheet
    sheet = pd.read_excel(io.BytesIO(files.xlsx), sheet_name="details")
    assert list(sheet["Offer key"]) == keys

    cleared = shortlist_files.merge_notes(notes, edited.assign(note=""))
    assert cleared == {"stale/key": "kept"}
    assert "Reviewer notes" not in shortlist_files.memo_text(chosen, cleared)
