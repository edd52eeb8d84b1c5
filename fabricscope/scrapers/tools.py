"""Run spiders in one Scrapy process: refresh sources, or parse saved responses.

    python -m fabricscope.scrapers.tools crawl [--offline] [--record] SOURCE...
    python -m fabricscope.scrapers.tools parse SOURCE FILE [--url URL]

``crawl`` publishes each source's run and prints one JSON event per line.
``parse`` runs the source's spider and item pipelines on one saved response,
publishes nothing, and prints the offers, fabric facts and drops as JSON: the
spider sends its own first request (a POST with its body, a ``file://`` URL for a
curated file) and the replay middleware answers it with FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings

from fabricscope.scrapers.pipelines.anomaly import (
    REFERENCE_SETTING,
    reference_prices,
    reference_setting,
)


def spider_names() -> list[str]:
    return sorted(SpiderLoader.from_settings(get_project_settings()).list())


# set by `fabricscope refresh` and the scheduler (fabricscope/ops/refresh.py): the process this
# crawl must not outlive
PARENT_PID_ENV = "FABRICSCOPE_CRAWL_PARENT_PID"


def _parent_pid() -> int:
    """The process that started this crawl (0: none said)."""
    try:
        return int(os.environ.get(PARENT_PID_ENV) or 0)
    except ValueError:
        return 0


def _die_with_parent(process: CrawlerProcess, expected: int) -> None:
    """Stop when the process that started this crawl (``expected``) dies, so a crawl never
    runs on (and publishes) without it.

    On Linux the kernel sends SIGHUP when it dies (PR_SET_PDEATHSIG) and the crawl stops as
    at a shutdown (SIGHUP, not SIGTERM: Scrapy takes a second SIGTERM as "stop now, record
    nothing"). Everywhere, the run ledger (fabricscope/scrapers/extensions.py) sees the parent
    change: no spider opens after it, a running one is stopped, its run recorded aborted."""
    if not expected:
        return
    if sys.platform.startswith("linux"):
        import ctypes

        stopping: list[bool] = []

        def stop(*_: object) -> None:
            if not stopping:  # once, however many times it comes
                stopping.append(True)
                # imported here: by now Scrapy has installed the reactor it asked for
                from twisted.internet import reactor

                reactor.callFromThread(process.stop)  # type: ignore[attr-defined]

        signal.signal(signal.SIGHUP, stop)
        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(pr_set_pdeathsig, signal.SIGHUP, 0, 0, 0)
    if os.getppid() != expected:  # the parent died before the request took effect
        raise SystemExit("the refresh that started this crawl has already ended")


def crawl(
    sources: list[str],
    *,
    offline: bool,
    record: bool,
    overrides: dict[str, str] | None = None,
    start_urls: dict[str, list[str]] | None = None,
) -> int:
    """Crawl the sources in one process; each publishes its own run when it closes."""
    unknown = sorted(set(sources) - set(spider_names()))
    if unknown:
        print(f"unknown source(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    settings = get_project_settings()
    # every source compares its prices with the snapshot as it was before this crawl
    reference = reference_prices(Path(settings.get("FABRICSCOPE_WAREHOUSE", "")))
    settings.setdict(
        {
            "FABRICSCOPE_REPLAY_ENABLED": offline,
            "FABRICSCOPE_RECORD_ENABLED": record,
            "FABRICSCOPE_EVENTS_ENABLED": True,
            "FABRICSCOPE_PARENT_PID": _parent_pid(),
            REFERENCE_SETTING: reference_setting(reference),
            **(overrides or {}),
        },
        priority="cmdline",
    )
    process = CrawlerProcess(settings)
    _die_with_parent(process, settings.getint("FABRICSCOPE_PARENT_PID"))
    for source in sources:
        urls = (start_urls or {}).get(source)
        process.crawl(source, **({"start_urls": urls} if urls else {}))
    process.start()
    return 0


@dataclass(frozen=True)
class SavedResponse:
    """A saved response, and the URL the spider starts on (its first start URL by default).

    The spider's own request for that URL, whatever its method and body, is answered
    with the file; any further request is refused (nothing is fetched).
    """

    source: str
    file: Path
    url: str | None = None


def parse_saved(cases: list[SavedResponse]) -> list[dict[str, Any]]:
    """Spider + pipelines on saved responses; nothing is published."""
    loader_settings = get_project_settings()
    loader = SpiderLoader.from_settings(loader_settings)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="fabricscope-parse-") as tmp:
        loader_settings.set("LOG_INSTALL_ROOT_HANDLER", False)
        process = CrawlerProcess(loader_settings)
        dumps: list[Path] = []
        for index, case in enumerate(cases):
            spider_cls = loader.load(case.source)
            target = case.url or spider_cls.start_urls[0]
            dump = Path(tmp) / f"case{index}.json"
            dumps.append(dump)
            settings = get_project_settings()
            settings.setdict(
                {
                    "FABRICSCOPE_REPLAY_ENABLED": True,
                    "FABRICSCOPE_REPLAY_ANSWER_FILE": str(case.file.resolve()),
                    # no recordings: a request after the first one is refused, never fetched
                    "FABRICSCOPE_FIXTURES_DIR": str(Path(tmp) / "no-fixtures"),
                    "FABRICSCOPE_PUBLISH_ENABLED": False,
                    "FABRICSCOPE_RAW_DIR": "",
                    "FABRICSCOPE_DUMP_PATH": str(dump),
                    "LOG_LEVEL": "WARNING",
                },
                priority="cmdline",
            )
            crawler = process.create_crawler(spider_cls)
            crawler.settings = settings  # each case answers with its own file
            process.crawl(crawler, start_urls=[target])  # one start request: the file's
        process.start()
        for dump in dumps:
            results.append(json.loads(dump.read_text()) if dump.exists() else {})
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fabricscope.scrapers.tools")
    verbs = parser.add_subparsers(dest="verb", required=True)
    crawl_args = verbs.add_parser("crawl")
    crawl_args.add_argument("sources", nargs="*")
    crawl_args.add_argument("--offline", action="store_true")
    crawl_args.add_argument("--record", action="store_true")
    crawl_args.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a Scrapy setting"
    )
    crawl_args.add_argument(
        "--start-url",
        action="append",
        default=[],
        metavar="SOURCE=URL",
        help="crawl this URL instead of the source's own (tests, mirrors)",
    )
    listing = verbs.add_parser("list")
    listing.add_argument("--json", action="store_true", help="name and refresh_cron of each")
    many = verbs.add_parser("parse-many", help="parse several saved responses in one process")
    many.add_argument("cases", type=Path, help="JSON list of {source, file, url}")
    parse_args = verbs.add_parser("parse")
    parse_args.add_argument("source")
    parse_args.add_argument("file", type=Path)
    parse_args.add_argument("--url", help="the URL the file was saved from")
    args = parser.parse_args(argv)
    if args.verb == "list":
        if args.json:
            loader = SpiderLoader.from_settings(get_project_settings())
            print(
                json.dumps(
                    [
                        {"name": name, "refresh_cron": loader.load(name).refresh_cron}
                        for name in spider_names()
                    ]
                )
            )
        else:
            print("\n".join(spider_names()))
        return 0
    if args.verb == "parse-many":
        entries = json.loads(args.cases.read_text(encoding="utf-8"))
        cases = [SavedResponse(e["source"], Path(e["file"]), e.get("url")) for e in entries]
        print(json.dumps(parse_saved(cases)))
        return 0
    if args.verb == "crawl":
        overrides = dict(item.split("=", 1) for item in args.set)
        start_urls: dict[str, list[str]] = {}
        for item in args.start_url:
            source, url = item.split("=", 1)
            start_urls.setdefault(source, []).append(url)
        return crawl(
            args.sources or spider_names(),
            offline=args.offline,
            record=args.record,
            overrides=overrides,
            start_urls=start_urls,
        )
    if args.source not in spider_names():
        print(
            f"unknown source {args.source!r}; known: {', '.join(spider_names())}", file=sys.stderr
        )
        return 2
    if not args.file.is_file():
        print(f"no such file: {args.file}", file=sys.stderr)
        return 2
    case = SavedResponse(args.source, args.file, args.url)
    print(json.dumps(parse_saved([case])[0], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
