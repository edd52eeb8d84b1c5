"""Driving the app with streamlit.testing: open a page, read its text, catch its downloads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pandas as pd
import pytest
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe

from fabricscope.app.rank_form import STAR_GRID
from tests.helpers import ROOT

APP = str(ROOT / "fabricscope" / "app" / "app.py")
DEFAULT_PAGE = "pages/rank.py"
PAGES = [
    "pages/rank.py",
    "pages/overview.py",
    "pages/offers.py",
    "pages/providers.py",
    "pages/calibrate.py",
    "pages/shortlist.py",
    "pages/quotes.py",
    "pages/reference.py",
    "pages/sql.py",
]


def open_page(page: str, query_params: dict[str, str | list[str]] | None = None) -> AppTest:
    """The app opened on its home page (with ``query_params`` in the URL), then ``page``."""
    app = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query_params or {}).items():
        app.query_params[key] = value
    app.run()
    if page != DEFAULT_PAGE:
        app.switch_page(page)
        app.run()
    return app


def text_of(app: AppTest) -> str:
    parts = [e.value for e in app.markdown] + [e.value for e in app.caption]
    parts += [e.label for e in app.expander]
    parts += (
        [e.value for e in app.warning] + [e.value for e in app.info] + [e.value for e in app.error]
    )
    parts += [e.value for e in app.title] + [e.value for e in app.subheader]
    parts += [e.value for e in app.success]
    return "\n".join(str(p) for p in parts)


@contextmanager
def captured_downloads() -> Iterator[dict[str, bytes]]:
    """Bytes handed to st.download_button, by the URL the button points at.

    AppTest keeps a download's bytes in an in-memory media store it drops after each run;
    this records them as they are stored, so a test can read what a user would download.
    """
    stored: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):  # type: ignore[no-untyped-def]
        file_id = original(self, path_or_data, mimetype, kind, filename)
        data = path_or_data if isinstance(path_or_data, bytes) else path_or_data.encode()
        stored[self.get_url(file_id)] = data
        return file_id

    MemoryMediaFileStorage.load_and_get_id = record  # type: ignore[method-assign]
    try:
        yield stored
    finally:
        MemoryMediaFileStorage.load_and_get_id = original  # type: ignore[method-assign]


def download_data(app: AppTest, key: str, stored: dict[str, bytes]) -> bytes:
    button = app.download_button(key=key)
    return stored[button.proto.url]


def url_values(app: AppTest, key: str) -> list[str]:
    """A query parameter of the app's URL as a list (AppTest gives one value as a string)."""
    value = app.query_params.get(key, [])
    return [value] if isinstance(value, str) else list(value)


def star_grid(app: AppTest) -> Dataframe:
    """The Rank page's grid of ranked offers, whose ticked rows are the stars."""
    grids = [f for f in app.dataframe if f.key and f.key.startswith(STAR_GRID)]
    assert len(grids) == 1, "one grid of ranked offers on the Rank page"
    return grids[0]


def ticked(app: AppTest) -> list[str]:
    """The offer keys of the grid's ticked rows, in the grid's order."""
    grid = star_grid(app)
    rows = app.session_state[grid.key]["selection"]["rows"]
    keys = list(grid.value["offer_key"])
    return [keys[i] for i in sorted(rows)]


def tick(app: AppTest, offer_keys: list[str]) -> AppTest:
    """Tick exactly these offers' rows in the grid, as a click on their boxes does, and run."""
    grid = star_grid(app)
    rows = list(grid.value["offer_key"])
    app.session_state[grid.key] = {"selection": {"rows": [rows.index(k) for k in offer_keys]}}
    return app.run()


def served_as_ranked_live(
    monkeypatch: pytest.MonkeyPatch, query_params: dict[str, str | list[str]] | None = None
) -> tuple[AppTest, AppTest]:
    """The Rank page with ``query_params``, served from the ranking the refresh stored (and
    saying so), then ranked live: every table the same. Both pages, for more checks."""
    served = open_page(DEFAULT_PAGE, query_params)
    assert not served.exception and not served.error
    assert "Served from the ranking the last refresh stored" in text_of(served)
    monkeypatch.setenv("FABRICSCOPE_SERVE_STORED_RANKINGS", "false")
    live = open_page(DEFAULT_PAGE, query_params)
    assert not live.exception and not live.error
    assert "Served from the ranking" not in text_of(live)
    tables = [(f.value.columns.tolist(), f.value.shape) for f in served.dataframe]
    assert tables == [(f.value.columns.tolist(), f.value.shape) for f in live.dataframe]
    for one, other in zip(served.dataframe, live.dataframe, strict=True):
        pd.testing.assert_frame_equal(one.value, other.value, check_dtype=False)
    return served, live
