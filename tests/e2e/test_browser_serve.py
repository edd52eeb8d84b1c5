"""The Rank page's Serve mode in a real browser (as tests/e2e/test_browser.py drives the app:
`streamlit run` on 127.0.0.1, Playwright with Debian's headless Chromium): the switch to
Serve ranks the serving preset as `rank --serve` does, with no deadline; a shared Serve-mode
URL reopens its preset, whose offers fit one node and read the same in the fabric "what if";
an offer starred in its grid reaches the Shortlist, whose CSV is the serving row; the switch
back gives the training view.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from playwright.sync_api import Locator, Page, expect

from fabricscope.app.rank_data import ms
from fabricscope.app.rank_form import NO_DEADLINE
from fabricscope.app.view_state import RankView, request_of
from fabricscope.rank.ranking import rank
from tests.e2e.test_browser import (  # noqa: F401  (fixtures: one server for this module)
    app_url,
    browser,
    metric,
    page,
    shortlist_csv,
    wait_until_idle,
)
from tests.helpers import AS_OF

TRAIN_HEADING = "Rank offers for a training job"
SERVE_HEADING = "Rank offers for serving a model"


def summary(on: Page) -> Locator:
    return on.locator('[data-testid="stMarkdownContainer"]', has_text="ranked by").first


def test_serve_mode_ranks_a_served_model_and_its_url_reopens_it(
    app_url: str,  # noqa: F811
    page: Page,  # noqa: F811
    fixture_warehouse: Path,
    tmp_path: Path,
) -> None:
    page.goto(app_url)
    expect(page.get_by_role("heading", name=TRAIN_HEADING)).to_be_visible()
    wait_until_idle(page)

    # the switch at the top of the sidebar
    page.locator(".st-key-rk_mode").get_by_text("Serve", exact=True).click()
    expect(page.get_by_role("heading", name=SERVE_HEADING)).to_be_visible()
    wait_until_idle(page)
    expect(page).to_have_url(re.compile(r"mode=serve"))
    expect(summary(page)).to_contain_text("Llama 3 70B chat (FP8)")
    expect(summary(page)).to_contain_text("on 1 to 1,024 GPUs")
    expected = rank(fixture_warehouse, request_of(RankView(mode="serve")), AS_OF).offers
    assert len(expected) > 0
    assert metric(page, "Offers ranked") == f"{len(expected):,}"
    expect(page.locator(".st-key-rk_serve_gpus input")).to_have_value("1-1024")
    expect(page.locator(".st-key-rk_deadline_days")).to_have_count(0)
    expect(page.get_by_text(NO_DEADLINE)).to_be_visible()
    expect(page.get_by_text("A served model crosses the fabric only where")).to_be_visible()
    grid = page.locator('[data-testid="stDataFrame"]').nth(1)  # the providers', then offers'
    for header in ("USD/M out", "USD/M in", "TPOT (ms)"):
        expect(grid.locator('th[role="columnheader"]', has_text=header)).to_be_attached()

    # a shared Serve-mode link reopens its preset: a model that fits one node
    page.goto(f"{app_url}/?mode=serve&serve_preset=llama3-8b-chat")
    expect(page.get_by_role("heading", name=SERVE_HEADING)).to_be_visible()
    wait_until_idle(page)
    expect(summary(page)).to_contain_text("Llama 3 8B chat (bf16)")
    view = RankView(mode="serve", serve_preset="llama3-8b-chat")
    offers = rank(fixture_warehouse, request_of(view), AS_OF).offers
    assert set(offers["verdict"]) == {"the fabric does not matter: fits one node"}
    assert metric(page, "Offers ranked") == f"{len(offers):,}"
    # the grid is a canvas; its cells in view are also written, for screen readers, in a
    # table: the first offer's row (the header is row 1), its TPOT and TTFT as the CLI shows
    first = offers.iloc[0]
    grid = page.locator('[data-testid="stDataFrame"]').nth(1)
    cells = grid.locator('tr[aria-rowindex="2"] td[role="gridcell"]')
    expect(cells.nth(1)).to_have_text(first["provider"])
    expect(cells.nth(7)).to_have_text(ms(first["tpot_ms"], first["tpot_ms_low"]))
    expect(cells.nth(8)).to_have_text(ms(first["ttft_ms"]))

    # star it by its box in the grid: the Shortlist ranks the served model, and its CSV is
    # the serving row
    got = shortlist_csv(page, [0], tmp_path)
    assert list(got["offer_key"]) == [first["offer_key"]]
    for column in ("usd_per_million_output_tokens", "usd_per_million_input_tokens", "tpot_ms"):
        np.testing.assert_allclose(got[column], [float(first[column])], rtol=1e-12)
    page.locator('[data-testid="stSidebarNav"]').get_by_role(
        "link", name="Rank", exact=True
    ).click()
    expect(page.get_by_role("heading", name=SERVE_HEADING)).to_be_visible()
    wait_until_idle(page)

    # the fabric "what if", as in Train mode: a replica inside one node reads the same
    page.locator(".st-key-rk_what_if input").first.click()
    page.keyboard.type("infini")
    page.get_by_role("option", name="infiniband", exact=True).click()
    wait_until_idle(page)
    expect(page).to_have_url(re.compile(r"what_if=infiniband"))
    expect(page.get_by_text(f"0 of {len(offers):,} offers change with infiniband")).to_be_visible()

    # back to Train: the training view, its URL without the mode
    page.locator(".st-key-rk_mode").get_by_text("Train", exact=True).click()
    expect(page.get_by_role("heading", name=TRAIN_HEADING)).to_be_visible()
    wait_until_idle(page)
    expect(page).not_to_have_url(re.compile(r"mode=serve"))
    expect(summary(page)).to_contain_text("on 512 GPUs")
    expect(page.locator(".st-key-rk_deadline_days")).to_have_count(1)
