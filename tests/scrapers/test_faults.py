"""Faults through the real crawler against a local HTTP server (127.0.0.1 only).

After each fault: the right status in scrape_runs, the failing source's last good
rows unchanged (content hash), and nothing wrong published.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest

from fabricscope.warehouse.db import read_frame, verify
from tests.helpers import ROOT, python_env

FIXTURES = ROOT / "fixtures"
LAMBDA_PAGE = (FIXTURES / "lambda_cloud" / "lambda_pricing-page_20260109.html").read_bytes()


class Server:
    """Routes by path; remembers when each path was requested."""

    def __init__(self) -> None:
        self.hits: dict[str, list[float]] = defaultdict(list)
        self.authorization: dict[str, str | None] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.hits[self.path].append(time.monotonic())
                server.authorization[self.path] = self.headers.get("Authorization")
                status, headers, body, delay = server.route(self.path)
                if delay:
                    time.sleep(delay)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def route(self, path: str) -> tuple[int, dict[str, str], bytes, float]:
        html = {"Content-Type": "text/html; charset=utf-8"}
        if path == "/robots.txt":
            return 404, {}, b"", 0
        if path == "/pricing":
            return 200, html, LAMBDA_PAGE, 0
        if path == "/changed":
            return 200, html, b"<html><body><div class='new'>Our new pricing</div></body></html>", 0
        if path == "/unavailable":
            return 200, html, b"<html><body><h1>Temporarily unavailable</h1></body></html>", 0
        if path == "/limited":
            if len(self.hits[path]) == 1:
                return 429, {"Retry-After": "2"}, b"slow down", 0
            return 200, html, LAMBDA_PAGE, 0
        if path == "/down":
            return 503, {}, b"service unavailable", 0
        if path == "/hang":
            return 200, html, LAMBDA_PAGE, 30
        if path == "/huge":  # far more than any price page: 4 MB of it
            return 200, html, LAMBDA_PAGE * (4_000_000 // len(LAMBDA_PAGE) + 1), 0
        if path.startswith("/fixtures/"):
            file = FIXTURES / path.removeprefix("/fixtures/")
            return 200, html, file.read_bytes(), 0
        return 404, {}, b"", 0


@pytest.fixture
def server():
    running = Server()
    running.thread.start()
    yield running
    running.httpd.shutdown()
    running.httpd.server_close()


def crawl(
    warehouse: Path,
    starts: dict[str, str],
    *settings: str,
    timeout: float = 120,
    env: dict[str, str] | None = None,
):
    args = [sys.executable, "-m", "fabricscope.scrapers.tools", "crawl", *starts]
    for source, url in starts.items():
        args += ["--start-url", f"{source}={url}"]
    for setting in ("DOWNLOAD_DELAY=0", "AUTOTHROTTLE_ENABLED=False", *settings):
        args += ["--set", setting]
    env = {
        **python_env(),
        "FABRICSCOPE_WAREHOUSE": str(warehouse),
        "FABRICSCOPE_DATA_DIR": str(warehouse.parent),
        **(env or {}),
    }
    started = time.monotonic()
    result = subprocess.run(
        args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout, check=False
    )
    return result, time.monotonic() - started


def last_run(warehouse: Path, source: str):
    return read_frame(
        warehouse,
        "select * from scrape_runs where source = ? order by finished_at desc limit 1",
        [source],
    )[1].iloc[0]


def current_rows(warehouse: Path, source: str):
    return read_frame(
        warehouse,
        "select * exclude (run_id) from offers_current where source = ? order by all",
        [source],
    )[1]


@pytest.fixture
def good(tmp_path, server):
    """A warehouse where lambda_cloud has a good run from the local server."""
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    result, _ = crawl(warehouse, {"lambda_cloud": server.url("/pricing")})
    assert result.returncode == 0, result.stderr[-2000:]
    assert last_run(warehouse, "lambda_cloud")["status"] == "ok"
    return warehouse


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/changed", "layout was not recognised"),
        ("/unavailable", "layout was not recognised"),
        ("/down", "HTTP 503"),
    ],
)
def test_a_bad_answer_fails_the_source_and_keeps_its_last_good_rows(good, server, path, expected):
    before = current_rows(good, "lambda_cloud")
    result, _ = crawl(good, {"lambda_cloud": server.url(path)}, "RETRY_TIMES=1")
    assert result.returncode == 0, result.stderr[-2000:]
    run = last_run(good, "lambda_cloud")
    assert run["status"] == "failed" and expected in run["error_text"]
    assert run["items_published"] == 0
    assert current_rows(good, "lambda_cloud").equals(before)
    assert verify(good).ok


def test_429_with_retry_after_waits_then_succeeds(tmp_path, server):
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    result, _ = crawl(warehouse, {"lambda_cloud": server.url("/limited")})
    assert result.returncode == 0, result.stderr[-2000:]
    first, second = server.hits["/limited"][:2]
    assert second - first >= 1.9, "the retry must wait for Retry-After: 2"
    run = last_run(warehouse, "lambda_cloud")
    assert run["status"] == "ok" and run["items_published"] == 5
    assert '"fabricscope/retry_after/waits": 1' in run["scrapy_stats"]


def test_a_server_that_never_answers_ends_within_the_timeout(good, server):
    before = current_rows(good, "lambda_cloud")
    result, seconds = crawl(
        good, {"lambda_cloud": server.url("/hang")}, "DOWNLOAD_TIMEOUT=2", "RETRY_TIMES=1"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert seconds < 25, f"the crawl took {seconds:.0f} s"
    run = last_run(good, "lambda_cloud")
    assert run["status"] == "failed" and "TimeoutError" in run["error_text"]
    assert current_rows(good, "lambda_cloud").equals(before)


def test_unknown_url_offline_is_refused_without_network(tmp_path):
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    args = [
        sys.executable,
        "-m",
        "fabricscope.scrapers.tools",
        "crawl",
        "lambda_cloud",
        "--offline",
        "--start-url",
        "lambda_cloud=https://lambda.ai/some-page-never-recorded",
    ]
    env = {
        **python_env(),
        "FABRICSCOPE_WAREHOUSE": str(warehouse),
        "FABRICSCOPE_DATA_DIR": str(warehouse.parent),
    }
    result = subprocess.run(
        args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=False
    )
    assert "offline: no recorded response for GET https://lambda.ai/some-page-never-recorded" in (
        result.stderr
    )
    run = last_run(warehouse, "lambda_cloud")
    assert run["status"] == "failed" and "no recorded response" in run["error_text"]
    assert '"fabricscope/replay/unknown_url": 1' in run["scrapy_stats"]
    assert "downloader/response_count" not in run["scrapy_stats"]  # nothing was downloaded


def test_record_then_replay_gives_the_same_items(tmp_path, server):
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "SOURCES.md").write_text(
        "| file | URL | captured | origin | licence | complete? |\n"
    )
    live = tmp_path / "live" / "warehouse.duckdb"
    url = server.url("/pricing")
    env = {"FABRICSCOPE_FIXTURES_DIR": str(fixtures)}
    result, _ = crawl(live, {"lambda_cloud": url}, "FABRICSCOPE_RECORD_ENABLED=True", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    entries = json.loads((fixtures / "lambda_cloud" / "requests.json").read_text())
    assert [e["url"] for e in entries] == [url]
    assert (fixtures / "lambda_cloud" / entries[0]["file"]).read_bytes() == LAMBDA_PAGE
    assert f"lambda_cloud/{entries[0]['file']}" in (fixtures / "SOURCES.md").read_text()
    server.httpd.shutdown()  # from here on, no network at all
    replayed = tmp_path / "replayed" / "warehouse.duckdb"
    result, _ = crawl(replayed, {"lambda_cloud": url}, "FABRICSCOPE_REPLAY_ENABLED=True", env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    columns = "instance_type, gpu_model, gpu_count, price_usd_per_gpu_hour"
    assert read_frame(live, f"select {columns} from offers_current order by all")[1].equals(
        read_frame(replayed, f"select {columns} from offers_current order by all")[1]
    )


def test_one_source_down_while_two_others_publish(good, server):
    before = current_rows(good, "lambda_cloud")
    result, _ = crawl(
        good,
        {
            "lambda_cloud": server.url("/down"),
            "crusoe": server.url("/fixtures/crusoe/crusoe_cloud-pricing-page_20251215.html"),
            "nebius": server.url("/fixtures/nebius/nebius_prices-page_20260712.html"),
        },
        "RETRY_TIMES=1",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert last_run(good, "lambda_cloud")["status"] == "failed"
    assert "HTTP 503" in last_run(good, "lambda_cloud")["error_text"]
    assert current_rows(good, "lambda_cloud").equals(before)
    for source in ("crusoe", "nebius"):
        assert last_run(good, source)["status"] == "ok"
        assert len(current_rows(good, source)) > 0
    freshness = read_frame(good, "select * from source_freshness where source = 'lambda_cloud'")
    assert freshness[1].iloc[0]["failures_since_last_good"] == 1
    assert verify(good).ok


def test_an_api_key_from_the_settings_is_sent_and_nothing_else_is(tmp_path, server):
    warehouse = tmp_path / "data" / "warehouse.duckdb"
    env = {"FABRICSCOPE_LAMBDA_API_KEY": "test-key"}
    crawl(warehouse, {"lambda_api": server.url("/changed")}, env=env)
    assert server.authorization["/changed"] == "Bearer test-key"
    crawl(warehouse, {"lambda_api": server.url("/down")}, "RETRY_TIMES=0")
    assert server.authorization["/down"] is None


def test_identical_replays_publish_identical_offers(fixture_warehouse, tmp_path):
    """Replaying the same recordings publishes the same rows, whatever came before: the
    fixture warehouse's first refresh (from empty, nothing to compare with) and a second one
    over it (every offer now has a last price) publish the same offers. The anomaly check once
    compared prices with other providers' medians, so a second refresh quarantined a tenth of
    the offers the first had published; before that, with a snapshot its siblings were still
    changing, so two identical replays differed."""
    import shutil

    query = "select * exclude (run_id, observed_at) from offers_current order by all"
    _, first = read_frame(fixture_warehouse, query)
    folder = tmp_path / "second"
    folder.mkdir()
    path = folder / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, path)
    done = subprocess.run(
        [sys.executable, "-m", "fabricscope.cli", "refresh", "--offline", "--warehouse", str(path)],
        capture_output=True,
        text=True,
        env={**python_env(), "FABRICSCOPE_DATA_DIR": str(folder)},
        cwd=ROOT,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 3), done.stderr[-2000:]
    _, second = read_frame(path, query)
    _, jumped = read_frame(path, "select count(*) as n from quarantined_items")
    assert len(first) > 4000
    assert int(jumped.n.iloc[0]) == 0
    pd.testing.assert_frame_equal(first, second)


def test_a_response_over_the_size_cap_fails_the_source_and_keeps_its_last_good_rows(good, server):
    before = current_rows(good, "lambda_cloud")
    # the cap (64 MB by default) set to 1 MB here, so a 4 MB page stands for a 200 MB one
    result, _ = crawl(good, {"lambda_cloud": server.url("/huge")}, "DOWNLOAD_MAXSIZE=1000000")
    assert result.returncode == 0, result.stderr[-2000:]
    run = last_run(good, "lambda_cloud")
    assert run["status"] == "failed" and run["items_published"] == 0, run["error_text"]
    assert current_rows(good, "lambda_cloud").equals(before)
