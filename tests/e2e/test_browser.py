"""The app in a real browser: `streamlit run` on 127.0.0.1, driven by Playwright with Debian's
headless Chromium (installed by .ci/run). A shareable URL restores a ranking; two offers
starred by ticking their boxes in the grid reach the Shortlist, whose CSV download equals the
ranking rows; a quote typed into the Quotes page's form is stored and ranked on the Rank page;
every page is screenshotted into test-artifacts/screenshots/.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from bench.bench_browser import app_server
from fabricscope.model.workloads import preset
from fabricscope.procurement import quotes
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
    "quotes": "quotes",
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


def shortlist_csv(page: Page, rows: list[int], folder: Path) -> pd.DataFrame:
    """Star these rows of the Rank page's grid by their boxes, open the Shortlist and
    download its CSV."""
    for row in rows:
        tick_row(page, row)
        wait_until_idle(page)
    expect(page).to_have_url(re.compile(".*".join(["star="] * len(rows))))  # each one
    page.get_by_text(f"Open the shortlist ({len(rows)} starred)").click()
    expect(page.get_by_role("heading", name="Shortlist").first).to_be_visible()
    wait_until_idle(page)
    with page.expect_download() as downloading:
        page.get_by_role("button", name="CSV (the ranking rows)").click()
    saved = folder / "shortlist.csv"
    downloading.value.save_as(saved)
    return pd.read_csv(saved)


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
    got = shortlist_csv(page, [0, 1], tmp_path)
    want = expected.head(2)
    assert list(got["offer_key"]) == list(want["offer_key"])
    columns = ("time_to_train_h", "time_to_train_h_low", "cost_usd", "cost_usd_low", "mfu")
    for column in (*columns, "data_age_days"):  # prices aged at FABRICSCOPE_AS_OF
        np.testing.assert_allclose(got[column], want[column].astype(float), rtol=1e-12)
    assert list(got["provider"]) == list(want["provider"])


def field(page: Page, name: str) -> Locator:
    """The input of the Quotes form's field ``name`` (its widget's key is quote_<name>)."""
    return page.locator(f".st-key-quote_{name}").locator("input").first


def choose(page: Page, name: str, typed: str, option: str) -> None:
    """Pick ``option`` in the Quotes form's select box ``name``, found by typing ``typed``."""
    field(page, name).click()
    page.keyboard.type(typed)
    page.get_by_role("option", name=option, exact=True).click()
    expect(field(page, name)).to_have_value(option)


def test_a_quote_typed_into_the_form_is_stored_and_ranked(
    fixture_warehouse: Path, page: Page, tmp_path: Path
) -> None:
    # a server of its own, on a copy: the quote must not reach the other tests' warehouse
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copyfile(fixture_warehouse, warehouse)
    settings = {"FABRICSCOPE_AS_OF": AS_OF.isoformat()}
    with app_server(warehouse, tmp_path, settings) as (url, _):
        # home first: a fresh server opened on a page's own URL shows the pages folder's plain
        # navigation until the app's entry point has run once
        page.goto(url)
        expect(page.get_by_role("heading", name="Rank offers for a training job")).to_be_visible()
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Quotes").click()
        expect(page.get_by_role("heading", name="Quotes you received")).to_be_visible()

        choose(page, "provider", "lambda", "Lambda (lambda)")
        field(page, "configuration").fill("1-Click Cluster 512x H100")
        field(page, "gpu_model").fill("H100 SXM")
        field(page, "gpus").fill("512")
        field(page, "price_usd").fill("0.50")
        for name, day in (("quoted_at", "2026-12-01"), ("valid_until", "2027-06-30")):
            field(page, name).fill(day)
            page.keyboard.press("Escape")  # close the calendar the date opened
        choose(page, "fabric_class", "infini", "infiniband")
        field(page, "fabric_gbps_per_gpu").fill("400")
        page.locator(".st-key-quote_multi_node").get_by_text("yes", exact=True).click()
        field(page, "source").fill("email from Lambda sales, 2026-12-01")
        field(page, "entered_by").fill("pat")
        page.get_by_role("button", name="Store this quote").click()
        stored = page.locator('[data-testid="stAlert"]', has_text="Stored quote q-")
        expect(stored).to_be_visible()
        found = re.search(r"q-[0-9a-f]{10}", stored.inner_text())
        assert found is not None
        quote_id = found.group(0)

        # what the browser sent is what was typed
        row = quotes.stored_quotes(warehouse, AS_OF.date()).set_index("quote_id").loc[quote_id]
        assert (row["provider"], row["gpu_model"], row["gpus"]) == ("lambda", "H100-SXM-80GB", 512)
        assert (row["price_usd"], row["price_per"], row["pricing_tier"]) == (
            0.5,
            "gpu_hour",
            "on_demand",
        )
        assert pd.Timestamp(row["quoted_at"]).date() == date(2026, 12, 1)
        assert pd.Timestamp(row["valid_until"]).date() == date(2027, 6, 30)
        assert (row["fabric_class"], row["fabric_gbps_per_gpu"]) == ("infiniband", 400.0)
        assert bool(row["multi_node"]) and row["entered_by"] == "pat"

        request = RankRequest(workload=preset("llama3-70b"), gpu_counts=parse_gpu_counts("512"))
        offers = rank(warehouse, request, AS_OF).offers
        [ranked_at] = offers.loc[offers["quote_id"] == quote_id, "rank"]
        assert ranked_at == 1  # 0.50 USD per GPU-hour on InfiniBand beats every list price

        page.goto(f"{url}/?preset=llama3-70b&gpus=512")
        summary = page.locator('[data-testid="stMarkdownContainer"]', has_text="ranked by").first
        expect(summary).to_contain_text("Llama 3 70B")
        expect(summary).to_contain_text("on 512 GPUs")
        grid = page.locator('[class*="st-key-rk_star_grid_"]')
        # the grid is a canvas; its cells are also written, for screen readers, in a table of
        # the columns in view: scroll right to the price column as a user would
        expect(grid.locator('td[role="gridcell"]').first).to_be_attached()
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(500, 0)
        said = f"your quote {quote_id}, valid until 2027-06-30"
        cell = grid.locator('td[role="gridcell"]', has_text=said)
        expect(cell).to_be_attached()
        # its row is the first of the grid's (the header is row 1): ranked first
        expect(cell.locator("xpath=..")).to_have_attribute("aria-rowindex", "2")


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
