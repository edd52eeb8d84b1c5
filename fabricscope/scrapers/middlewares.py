"""Downloader middlewares: replay/record of recorded responses, and Retry-After.

Replay (``FABRICSCOPE_REPLAY_ENABLED``): every request is answered from
``fixtures/<source>/requests.json``; a URL with no recording is a clear error and
never reaches the network. An entry marked ``"constructed": true`` (built from a
provider's documentation example, not recorded) is refused too: it tests the
spider's parsing (``fabricscope.scrapers.tools parse``), but its values are not prices and are
never replayed into the warehouse. ``FABRICSCOPE_REPLAY_ANSWER_FILE`` (set by
``fabricscope.scrapers.tools parse``) answers the spider's first request, whatever its method,
body or scheme, with that file. Record (``FABRICSCOPE_RECORD_ENABLED``): live
responses are saved under ``fixtures/<source>/`` with an entry in ``requests.json``
and a line to add to ``fixtures/SOURCES.md``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import mimetypes
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.http.response.html import HtmlResponse
from scrapy.http.response.text import TextResponse
from scrapy.utils.response import response_status_message

from fabricscope.scrapers.run import CONSTRUCTED_REFUSED, UNKNOWN_URL

MANIFEST = "requests.json"


def request_key(method: str, url: str, body: bytes = b"") -> str:
    """Method, URL and (for POST) a hash of the body identify a recorded response."""
    key = f"{method.upper()} {url}"
    return f"{key} {hashlib.sha256(body).hexdigest()[:16]}" if body else key


@dataclass(frozen=True)
class Recording:
    file: str
    status: int
    content_type: str
    recorded_at: datetime | None
    # built from documentation, not recorded: parse it in tests, never replay it as data
    constructed: bool = False


def load_manifest(directory: Path) -> dict[str, Recording]:
    path = directory / MANIFEST
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {
        request_key(e["method"], e["url"], bytes.fromhex(e.get("body_hex", ""))): Recording(
            e["file"],
            int(e.get("status", 200)),
            e.get("content_type", "text/html"),
            datetime.fromisoformat(e["recorded_at"]) if e.get("recorded_at") else None,
            bool(e.get("constructed", False)),
        )
        for e in entries
    }


def content_type_of(path: Path) -> str:
    """A saved file's content type from its name (``.json``, ``.csv``, ``.txt``...)."""
    return mimetypes.guess_type(path.name)[0] or "text/html"


def _response_class(content_type: str) -> type[TextResponse]:
    return HtmlResponse if "html" in content_type else TextResponse


class ReplayMiddleware:
    """Answer from fixtures, offline; an unknown URL or a constructed example is refused,
    never fetched."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("FABRICSCOPE_REPLAY_ENABLED"):
            raise NotConfigured
        self.crawler = crawler
        self.root = Path(crawler.settings["FABRICSCOPE_FIXTURES_DIR"])
        self._manifests: dict[str, dict[str, Recording]] = {}
        answer = crawler.settings.get("FABRICSCOPE_REPLAY_ANSWER_FILE")
        self._answer_file: Path | None = Path(answer) if answer else None
        self._parsing = self._answer_file is not None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReplayMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> Response | None:
        if request.url.endswith("/robots.txt"):  # offline there is no robots.txt to obey
            return Response(url=request.url, status=404, request=request)
        spider = self.crawler.spider
        assert spider is not None and self.crawler.stats is not None
        if self._answer_file is not None:  # `parse`: the spider's own request, the user's file
            file, self._answer_file = self._answer_file, None
            self.crawler.stats.inc_value("fabricscope/replay/served")
            return self._response(request, file.read_bytes(), 200, content_type_of(file))
        if request.url.startswith("file://"):
            return None  # local files (curated data) need no network
        manifest = self._manifests.setdefault(spider.name, load_manifest(self.root / spider.name))
        recording = manifest.get(request_key(request.method, request.url, request.body))
        if recording is None:
            self.crawler.stats.inc_value(UNKNOWN_URL)
            hint = (
                "`parse` answers only the spider's first request, with the saved file"
                if self._parsing
                else "record it with `fabricscope refresh --record`"
            )
            spider.logger.error(
                f"offline: no recorded response for {request.method} {request.url} in "
                f"fixtures/{spider.name}/{MANIFEST}; {hint}"
            )
            raise IgnoreRequest(f"no recording for {request.url}")
        if recording.constructed:
            self.crawler.stats.inc_value(CONSTRUCTED_REFUSED)
            spider.logger.error(
                f"offline: fixtures/{spider.name}/{recording.file} is a documentation example "
                f'("constructed": true in {MANIFEST}), not a recording of {request.method} '
                f"{request.url}: it tests the spider, it is never replayed as data; record a "
                f"real response with `fabricscope refresh --live --record --source {spider.name}`"
            )
            raise IgnoreRequest(f"only a constructed example for {request.url}")
        body = (self.root / spider.name / recording.file).read_bytes()
        self.crawler.stats.inc_value("fabricscope/replay/served")
        run = getattr(spider, "run", None)
        if run is not None and recording.recorded_at is not None:
            run.saw_recording_from(recording.recorded_at)
        return self._response(request, body, recording.status, recording.content_type)

    @staticmethod
    def _response(request: Request, body: bytes, status: int, content_type: str) -> Response:
        return _response_class(content_type)(
            url=request.url,
            status=status,
            headers={"Content-Type": content_type},
            body=body,
            request=request,
        )


class RecordMiddleware:
    """Save live responses as fixtures (run with the network, `--record`)."""

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.getbool("FABRICSCOPE_RECORD_ENABLED"):
            raise NotConfigured
        self.crawler = crawler
        self.root = Path(crawler.settings["FABRICSCOPE_FIXTURES_DIR"])

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RecordMiddleware:
        return cls(crawler)

    def process_response(self, request: Request, response: Response) -> Response:
        spider = self.crawler.spider
        if spider is None or response.status != 200 or request.url.endswith("/robots.txt"):
            return response
        record_response(self.root, spider, request, response)
        return response


def record_response(root: Path, spider: Spider, request: Request, response: Response) -> Path:
    directory = root / spider.name
    directory.mkdir(parents=True, exist_ok=True)
    content_type = response.headers.get(b"Content-Type", b"text/html").decode().split(";")[0]
    extension = {"application/json": "json", "text/csv": "csv"}.get(content_type, "html")
    stem = re.sub(r"[^a-z0-9]+", "-", request.url.split("://", 1)[-1].lower()).strip("-")[:60]
    today = datetime.now(UTC)
    name = f"{stem}_{today:%Y%m%d}.{extension}"
    (directory / name).write_bytes(response.body)
    manifest_path = directory / MANIFEST
    entries: list[dict[str, Any]] = (
        json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else []
    )
    entries = [e for e in entries if e["url"] != request.url or e["method"] != request.method]
    entry: dict[str, Any] = {
        "method": request.method,
        "url": request.url,
        "file": name,
        "status": response.status,
        "content_type": content_type,
        "recorded_at": f"{today:%Y-%m-%dT%H:%M:%SZ}",
    }
    if request.body:
        entry["body_hex"] = request.body.hex()
    entries.append(entry)
    manifest_path.write_text(json.dumps(entries, indent=2) + "\n", encoding="utf-8")
    line = (
        f"| {spider.name}/{name} | {request.method} {request.url} ({content_type}) | "
        f"{today:%Y-%m-%d} | recorded live by `fabricscope refresh --record` | "
        "the provider's published page; check its terms before republishing | complete |\n"
    )
    with (root / "SOURCES.md").open("a", encoding="utf-8") as sources:
        sources.write(line)
    spider.logger.info(f"recorded {request.url} -> fixtures/{spider.name}/{name}")
    return directory / name


def retry_after_seconds(value: bytes | str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date."""
    if not value:
        return None
    text = value.decode() if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RetryAfterMiddleware(RetryMiddleware):
    """Scrapy's retry, waiting as long as the server's Retry-After asks (up to a cap).

    Scrapy alone retries at once (scrapy/scrapy#3849). The wait is an asyncio sleep,
    so other requests go on meanwhile.
    """

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.max_wait_s = settings.getfloat("FABRICSCOPE_RETRY_AFTER_MAX_S", 60.0)

    async def process_response(self, request: Request, response: Response) -> Request | Response:  # type: ignore[override]
        if request.meta.get("dont_retry", False) or response.status not in self.retry_http_codes:
            return response
        retry = self._retry(request, response_status_message(response.status))
        if retry is None:
            return response
        wait = retry_after_seconds(response.headers.get(b"Retry-After"))
        if wait:
            wait = min(wait, self.max_wait_s)
            assert self.crawler.stats is not None
            self.crawler.stats.inc_value("fabricscope/retry_after/waits")
            self.crawler.stats.max_value("fabricscope/retry_after/max_s", wait)
            await asyncio.sleep(wait)
        return retry
