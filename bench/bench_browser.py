"""The Rank page as a user sees it: `streamlit run` driven by Playwright on Debian's headless
Chromium (as tests/e2e does), over a warehouse built from the recorded fixtures.

Three waits are timed: the first load (a fresh server and browser, from navigation until the
page's script run has ended with its table drawn), a warm load (the same URL again, the
server's caches filled) and a control change (until the table shows the new result). Each is
reported as a ratio to the same wait on a baseline page measured side by side, interleaved.

The baseline would be the Rank page's view served from the materialised estimates
(`estimates_current`, filled by every refresh for the preset rankings), but no page of the app
reads that table: the Rank page always ranks live from the snapshot (cached per snapshot id).
So the baseline is the cheapest comparable page, Offers: the same snapshot's offers in one
filterable table, no model.
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, Page, Playwright, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from warehouse.db import read_frame

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
RUNS = 5
# a view set in the URL (the app's default is another), one of the preset rankings the refresh
# materialises (pipeline/presets/rankings.json), and the GPU count the control change asks for
PRESET, GPUS, TIER, OBJECTIVE = "llama3-8b", "64", "on_demand", "cost"
CHANGED_GPUS = "128"
# a wait on a condition, bounded: on 2 busy cores a cold ranking takes far longer than usual
TIMEOUT_MS = 240_000
SERVER_START_S = 90.0
PHASES = ("first load", "warm load", "control change")

# True once the page's script run has ended (the script state Streamlit sets on the app root),
# nothing of an earlier run is left (stale), at least ``tables`` tables are drawn and a text or
# caption shows ``text``; "exception" if the page raised.
ANSWERED_JS = """([text, tables]) => {
    if (document.querySelector('[data-testid="stException"]')) return "exception";
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== "notRunning") return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    if (document.querySelectorAll('[data-testid="stDataFrame"]').length < tables) return false;
    const texts = document.querySelectorAll(
        '[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"]');
    return Array.from(texts).some((element) => element.textContent.includes(text));
}"""


@dataclass(frozen=True)
class Subject:
    """A page under test: its URL, what it shows once it has answered, and a control change
    (``change`` readies the control and returns the action that commits it)."""

    name: str
    path: str
    answered: str
    tables: int
    change: Callable[[Page], Callable[[], None]]
    changed: str
    change_described: str


Timings = dict[str, dict[str, list[float]]]  # page name -> phase -> seconds, one per run


def _gpu_count_to(value: str) -> Callable[[Page], Callable[[], None]]:
    def ready(page: Page) -> Callable[[], None]:
        field = page.locator('[data-testid="stTextInput"]', has_text="GPU count").locator("input")
        field.fill(value)
        return lambda: field.press("Enter")

    return ready


def _tier_filter_to(tier: str) -> Callable[[Page], Callable[[], None]]:
    def ready(page: Page) -> Callable[[], None]:
        page.locator('[data-testid="stMultiSelect"]', has_text="Tier").locator("input").click()
        option = page.get_by_role("option", name=tier, exact=True)
        option.wait_for()
        return option.click

    return ready


def subjects(warehouse: Path) -> tuple[Subject, Subject]:
    """The Rank page's benchmarked view and the Offers page, with the texts that show each has
    answered, read from ``warehouse``."""
    _, counts = read_frame(
        warehouse,
        "select count(*) as total, count(*) filter (where pricing_tier = 'spot') as spot "
        "from instance_catalog",
    )
    total, spot = int(counts["total"].iloc[0]), int(counts["spot"].iloc[0])
    rank = Subject(
        name="Rank",
        path=f"/?preset={PRESET}&gpus={GPUS}&objective={OBJECTIVE}",
        answered=f"on {GPUS} GPUs",  # the summary above the tables (providers, offers)
        tables=2,
        change=_gpu_count_to(CHANGED_GPUS),
        changed=f"on {CHANGED_GPUS} GPUs",
        change_described=f"GPU count {GPUS} -> {CHANGED_GPUS} (a new ranking)",
    )
    offers = Subject(
        name="Offers",
        path="/offers",
        answered=f"{total:,} of {total:,} offers",
        tables=1,
        change=_tier_filter_to("spot"),
        changed=f"{spot:,} of {total:,} offers",
        change_described="Tier filter set to spot",
    )
    return rank, offers


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serving(
    warehouse: Path, data: Path, settings: Mapping[str, str] | None = None
) -> Iterator[tuple[str, Path]]:
    """A fresh `streamlit run` of the app on 127.0.0.1, once it answers its health check;
    yields its URL and its log. ``settings``: more FABRICSCOPE_ variables (the browser tests
    pin "now" with FABRICSCOPE_AS_OF)."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICSCOPE_")}
    env |= {
        "PYTHONPATH": str(ROOT),
        "FABRICSCOPE_WAREHOUSE": str(warehouse),
        "FABRICSCOPE_DATA_DIR": str(data),
        **(settings or {}),
    }
    log_path = data / f"streamlit-{port}.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "streamlit", "run", "ui/app.py",
                "--server.headless=true", f"--server.port={port}", "--server.address=127.0.0.1",
                "--browser.gatherUsageStats=false", "--server.fileWatcherType=none",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + SERVER_START_S
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start on port {port}: {_tail(log_path)}")
                time.sleep(0.2)  # polling the health check, not timing anything
            yield url, log_path
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
            return bool(answer.read().strip() == b"ok")
    except OSError:
        return False


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] or "(empty log)"


@contextmanager
def _browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage",
              "--disable-gpu"],
    )  # fmt: skip
    try:
        yield launched
    finally:
        launched.close()


def _until_answered(page: Page, subject: Subject, text: str, log: Path) -> None:
    try:
        outcome = page.wait_for_function(
            ANSWERED_JS, arg=[text, subject.tables], polling="raf", timeout=TIMEOUT_MS
        ).json_value()
    except PlaywrightTimeout as exc:
        raise RuntimeError(
            f"the {subject.name} page did not show {text!r} with {subject.tables} table(s) "
            f"within {TIMEOUT_MS / 1000:g} s at {page.url}; server log: {_tail(log)}"
        ) from exc
    if outcome == "exception":
        raise RuntimeError(f"the {subject.name} page raised at {page.url}; see {log}")


def _timed_load(page: Page, url: str, subject: Subject, log: Path) -> float:
    began = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
    _until_answered(page, subject, subject.answered, log)
    return time.perf_counter() - began


def _one_run(playwright: Playwright, warehouse: Path, data: Path, subject: Subject) -> list[float]:
    """First load, warm load and control change of ``subject`` on a fresh server and browser."""
    with serving(warehouse, data) as (base, log), _browser(playwright) as browser:
        context = browser.new_context(viewport={"width": 1500, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        url = f"{base}{subject.path}"
        first = _timed_load(page, url, subject, log)
        warm = _timed_load(page, url, subject, log)
        commit = subject.change(page)
        began = time.perf_counter()
        commit()
        _until_answered(page, subject, subject.changed, log)
        change = time.perf_counter() - began
        context.close()
    return [first, warm, change]


def measure(warehouse: Path, runs: int, report: Callable[[str], None]) -> Timings:
    """Seconds of each phase on each page, ``runs`` times, the pages interleaved (a busy
    moment slows both alike), each run on a fresh server and browser."""
    pages = subjects(warehouse)
    timings: Timings = {s.name: {phase: [] for phase in PHASES} for s in pages}
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        for run in range(runs):
            for subject in pages if run % 2 == 0 else pages[::-1]:
                seconds = _one_run(playwright, warehouse, Path(folder), subject)
                for phase, took in zip(PHASES, seconds, strict=True):
                    timings[subject.name][phase].append(took)
                report(
                    f"browser: run {run + 1}/{runs} {subject.name}: "
                    + ", ".join(f"{p} {s:.2f} s" for p, s in zip(PHASES, seconds, strict=True))
                )
    return timings


def _build_warehouse(folder: Path) -> Path:
    """`fabricscope init` then `refresh --offline` (the recorded fixtures), as the tests do."""
    path = folder / "warehouse.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICSCOPE_")}
    env |= {"PYTHONPATH": str(ROOT), "FABRICSCOPE_DATA_DIR": str(folder)}
    for args, ok in ((["init"], (0,)), (["refresh", "--offline"], (0, 3))):
        # exit 3: some sources have no usable recording (constructed examples) and fail
        done = subprocess.run(
            [sys.executable, "-m", "pipeline.cli", *args, "--warehouse", str(path)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in ok:
            raise RuntimeError(f"fabricscope {' '.join(args)} failed: {done.stderr[-1000:]}")
    return path


def section(timings: Timings, warehouse: Path) -> list[str]:
    """The results.md section: medians, their ratios and every run."""
    rank, offers = subjects(warehouse)
    runs = len(timings[rank.name][PHASES[0]])
    _, materialised = read_frame(
        warehouse,
        "select count(*) as n from estimates_current "
        "where workload = ? and gpus_requested = ? and pricing_tier = ? and objective = ?",
        [PRESET, GPUS, TIER, OBJECTIVE],
    )
    median = {
        name: {phase: statistics.median(runs_) for phase, runs_ in phases.items()}
        for name, phases in timings.items()
    }
    ratio = {phase: median[rank.name][phase] / median[offers.name][phase] for phase in PHASES}
    return [
        "",
        f"### The Rank page in a real browser, as a ratio to the Offers page (median of {runs})",
        "",
        f"Headless Chromium driven by Playwright on `streamlit run`, over the warehouse built "
        f"from the recorded fixtures (`fabricscope init`, `refresh --offline`): Rank at "
        f"`{rank.path}` ({PRESET} on {GPUS} GPUs, {TIER}, by {OBJECTIVE}), Offers at "
        f"`{offers.path}`. **No page of the app is served from the materialised estimates**: "
        f"the refresh writes this view into `estimates_current` "
        f"({int(materialised['n'].iloc[0]):,} rows), but the Rank page ranks live from the "
        "snapshot (cached per snapshot id) and nothing in ui/ reads that table. So the ratio "
        "is to the cheapest comparable page instead, Offers: the same snapshot's offers in "
        "one table, no model. Each run starts a fresh server and browser per page, the pages "
        "interleaved. First load: from navigation until the script run has ended with the "
        "table drawn; warm load: the same URL again; control change: "
        f"{rank.change_described} on Rank, {offers.change_described} on Offers, until the "
        "table shows the new result.",
        "",
        "| phase | Rank s | Offers s | ratio Rank / Offers |",
        "|---|---:|---:|---:|",
        *[
            f"| {phase} | {median[rank.name][phase]:.2f} | {median[offers.name][phase]:.2f} "
            f"| **{ratio[phase]:.1f}x** |"
            for phase in PHASES
        ],
        "",
        "Every run, seconds (first / warm / change):",
        "",
        "| run | Rank | Offers |",
        "|---:|---|---|",
        *[
            f"| {run + 1} | "
            + " | ".join(
                " / ".join(f"{timings[name][phase][run]:.2f}" for phase in PHASES)
                for name in (rank.name, offers.name)
            )
            + " |"
            for run in range(runs)
        ],
        "",
    ]


def run(report: Callable[[str], None], runs: int = RUNS) -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        report("browser: building a warehouse from the recorded fixtures")
        warehouse = _build_warehouse(Path(folder))
        report(f"browser: Rank and Offers pages, {runs} interleaved runs on fresh servers")
        timings = measure(warehouse, runs, report)
        return section(timings, warehouse)


if __name__ == "__main__":
    # this benchmark alone (`python -m bench.bench_browser`), printing its results.md section
    print("\n".join(run(lambda message: print(f"[bench] {message}", file=sys.stderr))))
