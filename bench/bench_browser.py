"""The Rank page as a user sees it: `streamlit run` driven by Playwright on Debian's headless
Chromium (as tests/e2e does), over a warehouse built from the recorded fixtures.

Three waits are timed: the first load (a fresh server and browser, from navigation until the
page's script run has ended with its tables drawn), a warm load (the same URL again, the
server's caches filled) and a control change (until the tables show the new result). Each is
reported as a ratio to the same wait on the same page served from the materialised estimates
(the rankings every refresh stores, fabricscope/rank/materialised.py), measured side by side,
interleaved: the app is started once with ``serve_stored_rankings`` off (every view ranked
live) and once with it on (the default). The view and the control change go between two
stored rankings (GPT-3 175B on 512 GPUs, the app's default view, and on 1,024), and each page
is checked to be served as it claims (the served page says so, the live one does not).
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

from fabricscope.app.view_state import DEFAULT_GPUS, DEFAULT_PRESET
from fabricscope.warehouse.db import read_frame

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
RUNS = 5
# the app's default view (fabricscope/rank/rankings.json stores it), and the GPU count the
# control change asks for (stored too): both are served from the warehouse when allowed
DEFAULT_PATH, GPUS, CHANGED_GPUS = "/", DEFAULT_GPUS, "1024"
STORED_TEXT = "Served from the ranking the last refresh stored"
# a wait on a condition, bounded: on 2 busy cores a cold ranking takes far longer than usual
TIMEOUT_MS = 240_000
SERVER_START_S = 90.0
PHASES = ("first load", "warm load", "control change")

# True once the page's script run has ended (the script state Streamlit sets on the app root),
# nothing of an earlier run is left (stale), at least ``tables`` tables are drawn and a text or
# caption shows each of ``texts`` and none shows ``absent``; "exception" if the page raised.
ANSWERED_JS = """([texts, absent, tables]) => {
    if (document.querySelector('[data-testid="stException"]')) return "exception";
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.dataset.testScriptState !== "notRunning") return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    if (document.querySelectorAll('[data-testid="stDataFrame"]').length < tables) return false;
    const shown = Array.from(document.querySelectorAll(
        '[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"]'),
        (element) => element.textContent).join("\\n");
    if (absent && shown.includes(absent)) return "absent shown";
    return texts.every((text) => shown.includes(text));
}"""


@dataclass(frozen=True)
class Subject:
    """A page under test: its URL, the app's settings, what it shows once it has answered
    (and must not show), and a control change (``change`` readies the control and returns
    the action that commits it)."""

    name: str
    path: str
    settings: Mapping[str, str]
    answered: tuple[str, ...]
    absent: str | None
    tables: int
    change: Callable[[Page], Callable[[], None]]
    changed: tuple[str, ...]
    change_described: str


Timings = dict[str, dict[str, list[float]]]  # page name -> phase -> seconds, one per run


def _gpu_count_to(value: str) -> Callable[[Page], Callable[[], None]]:
    def ready(page: Page) -> Callable[[], None]:
        field = page.locator('[data-testid="stTextInput"]', has_text="GPU count").locator("input")
        field.fill(value)
        return lambda: field.press("Enter")

    return ready


def subjects() -> tuple[Subject, Subject]:
    """The Rank page's default view ranked live, and the same served from the materialised
    estimates, with the texts that show each has answered as it claims."""

    def page(name: str, stored: bool) -> Subject:
        marks = (STORED_TEXT,) if stored else ()
        return Subject(
            name=name,
            path=DEFAULT_PATH,
            settings={"FABRICSCOPE_SERVE_STORED_RANKINGS": "true" if stored else "false"},
            answered=(f"on {GPUS} GPUs", *marks),  # the summary above the tables
            absent=None if stored else STORED_TEXT,
            tables=2,  # providers and offers
            change=_gpu_count_to(CHANGED_GPUS),
            changed=(f"on {CHANGED_GPUS} GPUs", *marks),
            change_described=f"GPU count {GPUS} -> {CHANGED_GPUS}",
        )

    return page("Rank, ranked live", stored=False), page("Rank, served stored", stored=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def app_server(
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
                sys.executable, "-m", "streamlit", "run", "fabricscope/app/app.py",
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


def _until_answered(page: Page, subject: Subject, texts: tuple[str, ...], log: Path) -> None:
    try:
        outcome = page.wait_for_function(
            ANSWERED_JS,
            arg=[list(texts), subject.absent, subject.tables],
            polling="raf",
            timeout=TIMEOUT_MS,
        ).json_value()
    except PlaywrightTimeout as exc:
        raise RuntimeError(
            f"the {subject.name} page did not show {texts!r} with {subject.tables} table(s) "
            f"within {TIMEOUT_MS / 1000:g} s at {page.url}; server log: {_tail(log)}"
        ) from exc
    if outcome == "exception":
        raise RuntimeError(f"the {subject.name} page raised at {page.url}; see {log}")
    if outcome == "absent shown":
        raise RuntimeError(f"the {subject.name} page showed {subject.absent!r} at {page.url}")


def _timed_load(page: Page, url: str, subject: Subject, log: Path) -> float:
    began = time.perf_counter()
    page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
    _until_answered(page, subject, subject.answered, log)
    return time.perf_counter() - began


def _one_run(playwright: Playwright, warehouse: Path, data: Path, subject: Subject) -> list[float]:
    """First load, warm load and control change of ``subject`` on a fresh server and browser."""
    with (
        app_server(warehouse, data, subject.settings) as (base, log),
        _browser(playwright) as browser,
    ):
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
    pages = subjects()
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
            [sys.executable, "-m", "fabricscope.cli", *args, "--warehouse", str(path)],
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
    live, stored = subjects()
    runs = len(timings[live.name][PHASES[0]])
    _, materialised = read_frame(
        warehouse,
        "select gpus_requested, offers, excluded from estimate_rankings "
        "where snapshot_id = (select max(snapshot_id) from estimate_rankings) "
        "and workload = ? and pricing_tier = 'on_demand' and objective = 'cost' "
        "order by length(gpus_requested), gpus_requested",
        [DEFAULT_PRESET],
    )
    stored_views = ", ".join(
        f"{r.gpus_requested} GPUs ({r.offers:,} offers ranked, {r.excluded:,} excluded)"
        for r in materialised.itertuples()
    )
    median = {
        name: {phase: statistics.median(runs_) for phase, runs_ in phases.items()}
        for name, phases in timings.items()
    }
    ratio = {phase: median[live.name][phase] / median[stored.name][phase] for phase in PHASES}
    return [
        "",
        "### The Rank page in a real browser: ranked live, as a ratio to the same page served "
        f"from the materialised estimates (median of {runs})",
        "",
        "Headless Chromium driven by Playwright on `streamlit run`, over the warehouse built "
        "from the recorded fixtures (`fabricscope init`, `refresh --offline`), which stores "
        f"the app's default view, {DEFAULT_PRESET} on-demand by cost, on {stored_views}. The "
        f"Rank page at `{live.path}` (that view) is served twice: ranked live "
        "(`serve_stored_rankings = false`) and served from the stored rankings (the default; "
        "the page says so, and the benchmark checks it). Each run starts a fresh server and "
        "browser per mode, the modes interleaved. First load: from navigation until the script "
        "run has ended with the tables drawn; warm load: the same URL again (the server's "
        f"caches filled, so both modes answer from memory); control change: "
        f"{live.change_described} (both stored), until the tables show the new result. "
        "What differs between the modes is the ranking itself (the model over the offers' "
        "hardware profiles; the section 'Ranking every current offer' times it alone): "
        "reading the snapshot's offers for the form and drawing the page are common to both.",
        "",
        "| phase | ranked live s | served stored s | ratio live / served |",
        "|---|---:|---:|---:|",
        *[
            f"| {phase} | {median[live.name][phase]:.2f} | {median[stored.name][phase]:.2f} "
            f"| **{ratio[phase]:.2f}x** |"
            for phase in PHASES
        ],
        "",
        "Every run, seconds (first / warm / change):",
        "",
        "| run | ranked live | served stored |",
        "|---:|---|---|",
        *[
            f"| {run + 1} | "
            + " | ".join(
                " / ".join(f"{timings[name][phase][run]:.2f}" for phase in PHASES)
                for name in (live.name, stored.name)
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
        report(f"browser: Rank page live and served, {runs} interleaved runs on fresh servers")
        timings = measure(warehouse, runs, report)
        return section(timings, warehouse)


if __name__ == "__main__":
    # this benchmark alone (`python -m bench.bench_browser`), printing its results.md section
    print("\n".join(run(lambda message: print(f"[bench] {message}", file=sys.stderr))))
