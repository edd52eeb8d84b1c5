"""Run spiders in one Scrapy process: refresh sources, or parse saved responses.

    python -m scrapers.tools crawl [--offline] [--record] SOURCE...
    python -m scrapers.tools parse SOURCE FILE [--url URL]

``crawl`` publishes each source's run and prints one JSON event per line.
``parse`` runs the source's spider and item pipelines on one saved response,
publishes nothing, and prints the offers, fabric facts and drops as JSON.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scrapy.crawler import CrawlerProcess
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings


def spider_names() -> list[str]:
    return sorted(SpiderLoader.from_settings(get_project_settings()).list())


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
    settings.setdict(
        {
            "FABRICSCOPE_REPLAY_ENABLED": offline,
            "FABRICSCOPE_RECORD_ENABLED": record,
            "FABRICSCOPE_EVENTS_ENABLED": True,
            **(overrides or {}),
        },
        priority="cmdline",
    )
    process = CrawlerProcess(settings)
    for source in sources:
        urls = (start_urls or {}).get(source)
        process.crawl(source, **({"start_urls": urls} if urls else {}))
    process.start()
    return 0


def _content_type(path: Path) -> str:
    guessed = mimetypes.guess_type(path.name)[0]
    return guessed or "text/html"


@dataclass(frozen=True)
class SavedResponse:
    """A saved response and the request it answers (a spider's first start URL by default)."""

    source: str
    file: Path
    url: str | None = None
    method: str = "GET"
    body_hex: str = ""


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
            source, file = case.source, case.file
            spider_cls = loader.load(source)
            target = case.url or spider_cls.start_urls[0]
            fixtures = Path(tmp) / f"case{index}"
            (fixtures / source).mkdir(parents=True)
            body = file.read_bytes()
            (fixtures / source / "saved").write_bytes(body)
            (fixtures / source / "requests.json").write_text(
                json.dumps(
                    [
                        {
                            "method": case.method,
                            "url": target,
                            "body_hex": case.body_hex,
                            "file": "saved",
                            "status": 200,
                            "content_type": _content_type(file),
                        }
                    ]
                )
            )
            dump = Path(tmp) / f"case{index}.json"
            dumps.append(dump)
            settings = get_project_settings()
            settings.setdict(
                {
                    "FABRICSCOPE_REPLAY_ENABLED": True,
                    "FABRICSCOPE_FIXTURES_DIR": str(fixtures),
                    "FABRICSCOPE_PUBLISH_ENABLED": False,
                    "FABRICSCOPE_RAW_DIR": "",
                    "FABRICSCOPE_DUMP_PATH": str(dump),
                    "LOG_LEVEL": "WARNING",
                },
                priority="cmdline",
            )
            crawler = process.create_crawler(spider_cls)
            crawler.settings = settings  # each case replays its own file
            process.crawl(crawler, start_urls=[target])  # the saved file answers this URL
        process.start()
        for dump in dumps:
            results.append(json.loads(dump.read_text()) if dump.exists() else {})
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scrapers.tools")
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
    many.add_argument("cases", type=Path, help="JSON list of {source, file, url, method, body_hex}")
    parse_args = verbs.add_parser("parse")
    parse_args.add_argument("source")
    parse_args.add_argument("file", type=Path)
    parse_args.add_argument("--url")
    parse_args.add_argument("--method", default="GET")
    parse_args.add_argument("--body-hex", default="", help="the POST body the spider sends, hex")
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
        cases = [
            SavedResponse(
                e["source"],
                Path(e["file"]),
                e.get("url"),
                e.get("method", "GET"),
                e.get("body_hex", ""),
            )
            for e in entries
        ]
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
    case = SavedResponse(args.source, args.file, args.url, args.method.upper(), args.body_hex)
    print(json.dumps(parse_saved([case])[0], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
