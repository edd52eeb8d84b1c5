"""The app in a real browser: `streamlit run` on 127.0.0.1, driven by Playwright with Debian's
headless Chromium (installed by .ci/run). A shareable URL restores a ranking; two offers
starred by ticking their boxes in the grid reach the Shortlist, whose CSV download equals the
ranking rows; every page is screenshotted into test-artifacts/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from bench.bench_browser import app_server
from fabricscope.model.workloads import preset
from fabricscope.rank.ranking import RankRequest, parse_gpu_counts, rank
from tests.helpers import AS_OF, ROOT

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts" / "screenshots"
PAGES = {
    "rank": "",
    "overview": "overview",
    "offers": "offers",
    "providers": "providers",
    "calibrate": "calibrate",
    "shortlist": "shortlist",
    "gpus-and-fabrics": "reference",
    "sql": "sql",
}
TIMEOUT_MS = 90_000
# every expect() waits as long as a page action may: on a busy machine the first ranking of
# a page takes far more than Playwright's default 5 s (a wait on a condition, not a timing)
expect.set_options(timeout=TIMEOUT_MS)


@pytest.fixture(scope="module")
def app_url(fixture_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app served by `streamlit run` on 127.0.0.1 (the same start as the browser
    benchmark's), "now" pinned to AS_OF."""
    data = tmp_path_factory.mktemp("app-data")
    with app_server(fixture_warehouse, data, {"FABRICSCOPE_AS_OF": AS_OF.isoformat()}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-background-networking",
                "--disable-dev-shm-usage",
                "--disable-gpu",
            ],
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(accept_downloads=True, viewport={"width": 1500, "height": 1100})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    yield opened
    context.close()


def metric(page: Page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]', has_text=label).first
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


# the grid's geometry (Streamlit's default): a header row, then rows of this height; the
# row's box sits in the first column
GRID_ROW_PX = 35
BOX_X_PX = 18


def tick_row(page: Page, row: int) -> None:
    """Click the box at the start of the ``row``-th row of the Rank page's grid of offers
    (a canvas: the box is found by its place, below the header row)."""
    grid = page.locator('[class*="st-key-rk_star_grid_"]')
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + BOX_X_PX, box["y"] + GRID_ROW_PX * (row + 1.5))


def wait_until_idle(page: Page) -> None:
    """Wait for the script run to end (no running indicator) and its elements to be drawn
    (no placeholder skeletons), then a moment for canvases and charts."""
    page.wait_for_timeout(500)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=TIMEOUT_MS)
    expect(page.locator('[data-testid="stSkeleton"]')).to_have_count(0, timeout=TIMEOUT_MS)
    page.wait_for_timeout(1500)


def test_a_shared_url_restores_the_ranking_and_the_starred_offers_download_as_csv(
    app_url: str, page: Page, fixture_warehouse: Path, tmp_path: Path
) -> None:
    page.goto(f"{app_url}/?preset=mixtral-8x7b&gpus=256&objective=time")
    expect(page.get_by_text("Mixtral-style 8x7B MoE").first).to_be_visible()
    wait_until_idle(page)
    summary = page.locator('[data-testid="stMarkdownContainer"]', has_text="ranked by").first
    expect(summary).to_contain_text("on 256 GPUs")
    expect(summary).to_contain_text("ranked by time")
    request = RankRequest(
        workload=preset("mixtral-8x7b"), gpu_counts=parse_gpu_counts("256"), objective="time"
    )
    expected = rank(fixture_warehouse, request, AS_OF).offers
    assert metric(page, "Offers ranked") == f"{len(expected):,}"

    # star the first two offers of the ranking: tick their boxes in the grid of offers
    for row in (0, 1):
        tick_row(page, row)
        wait_until_idle(page)
    expect(page).to_have_url(re.compile(r"star=.*star="))  # the URL carries both
    page.get_by_text("Open the shortlist (2 starred)").click()
    expect(page.get_by_role("heading", name="Shortlist").first).to_be_visible()
    wait_until_idle(page)

    with page.expect_download() as downloading:
        page.get_by_role("button", name="CSV (the ranking rows)").click()
    saved = tmp_path / "shortlist.csv"
    downloading.value.save_as(saved)
    got = pd.read_csv(saved)
    want = expected.head(2)
    assert list(got["offer_key"]) == list(want["offer_key"])
    columns = ("time_to_train_h", "time_to_train_h_low", "cost_usd", "cost_usd_low", "mfu")
    for column in (*columns, "data_age_days"):  # prices aged at FABRICSCOPE_AS_OF
        np.testing.assert_allclose(got[column], want[column].astype(float), rtol=1e-12)
    assert list(got["provider"]) == list(want["provider"])


def test_every_page_renders_in_the_browser_and_is_screenshotted(app_url: str, page: Page) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name, path in PAGES.items():
        page.goto(f"{app_url}/{path}")
        expect(page.locator("h1").first).to_be_visible()
        wait_until_idle(page)
        assert page.locator('[data-testid="stException"]').count() == 0, name
        shot = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000, name
