"""Base spiders: one per recurring shape of source. Spiders only parse.

Every spider declares, as class attributes:

- ``name``: the source id (the file is ``<name>.py``, the class ``<Name>Spider``);
- ``item_attributes``: what is true of all its items (provider, currency,
  pricing_tier, price_basis, obtained_by, source_url...), applied by a pipeline;
- ``start_urls``: the live URLs (replayed from ``fixtures/<name>/`` offline);
- ``refresh_cron``: how often the scheduler runs it (cron, UTC);
- ``min_items``: fewer items than this fails the run (default 1).

A page whose layout the spider does not recognise yields nothing and calls
:meth:`FabricscopeSpider.layout_unknown`: the run fails, nothing wrong is published.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse

from fabricscope.scrapers.items import RawFabricFact, RawItem
from fabricscope.scrapers.run import RunCollector
from fabricscope.warehouse.models import RunMode


def squash(parts: Iterable[str]) -> str:
    """Text pieces joined with their whitespace collapsed to single spaces."""
    return " ".join(" ".join(parts).split())


def node_text(node: scrapy.Selector) -> str:
    """All the text inside an HTML node, whitespace collapsed."""
    return squash(node.css("::text").getall())


class FabricscopeSpider(scrapy.Spider):
    item_attributes: ClassVar[dict[str, Any]] = {}
    min_items: ClassVar[int] = 1
    refresh_cron: ClassVar[str] = "17 */6 * * *"
    custom_settings: ClassVar[dict[str, Any] | None] = {
        "DOWNLOAD_TIMEOUT": 30,
        "CLOSESPIDER_TIMEOUT": 300,
    }
    run: RunCollector

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FabricscopeSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        replay = crawler.settings.getbool("FABRICSCOPE_REPLAY_ENABLED")
        spider.run = RunCollector(spider.name, RunMode.REPLAY if replay else RunMode.LIVE)
        return spider

    def count_skip(self, reason: str, count: int = 1) -> None:
        """Count records left out on purpose, by reason (``fabricscope/skipped/<reason>``)."""
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"fabricscope/skipped/{reason}", count)

    def layout_unknown(self, response: Response, detail: str) -> None:
        """Say the page is not what this spider knows; the run then fails."""
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("fabricscope/layout_unknown")
        self.logger.error(f"unknown layout at {response.url}: {detail}; nothing parsed")


class LayoutSpider(FabricscopeSpider):
    """A page that has had several layouts over time (HTML price tables, cards, tabs).

    Override ``layouts``: parser methods that each return the items of the layout
    they know, or nothing for a page they do not recognise. The first that yields
    items wins; if none does, the layout is unknown.
    """

    layouts: ClassVar[tuple[str, ...]] = ()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawItem]:
        for layout in self.layouts:
            parser: Callable[[Response], Iterable[RawItem]] = getattr(self, layout)
            items = list(parser(response))
            if items:
                assert self.crawler.stats is not None
                self.crawler.stats.set_value("fabricscope/layout", layout)
                yield from items
                return
        self.layout_unknown(response, f"none of {', '.join(self.layouts)} matched")


class JsonApiSpider(FabricscopeSpider):
    """A JSON API: records found by walking ``records_path`` (keys or list indexes).

    Override ``parse_record(record, response)``; override ``start_requests``-style
    ``start()`` for POST APIs (GraphQL).
    """

    records_path: ClassVar[tuple[str | int, ...]] = ()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawItem]:
        try:
            node: Any = response.json() if isinstance(response, TextResponse) else None
        except ValueError:
            node = None
        for step in self.records_path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                node = None
                break
        if not isinstance(node, list):
            self.layout_unknown(response, f"no list at {'/'.join(map(str, self.records_path))}")
            return
        for record in node:
            yield from self.parse_record(record, response)

    def parse_record(self, record: Any, response: Response) -> Iterable[RawItem]:
        raise NotImplementedError


class CsvCatalogSpider(FabricscopeSpider):
    """A CSV catalog: rows by header name; ``required_columns`` must all be present.

    Override ``parse_row(row, response)``.
    """

    required_columns: ClassVar[frozenset[str]] = frozenset()

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawItem]:
        text = response.text if isinstance(response, TextResponse) else response.body.decode()
        reader = csv.DictReader(io.StringIO(text))
        missing = self.required_columns - set(reader.fieldnames or ())
        if missing:
            self.layout_unknown(response, f"columns {sorted(missing)} are missing")
            return
        for row in reader:
            yield from self.parse_row(row, response)

    def parse_row(self, row: dict[str, str], response: Response) -> Iterable[RawItem]:
        raise NotImplementedError


@dataclass(frozen=True)
class DocsFact:
    """A fabric fact a docs page states: ``sentence`` (a regex) must be found on it."""

    instance_type: str
    sentence: str
    fields: dict[str, Any] = field(default_factory=dict)


class DocsFabricSpider(FabricscopeSpider):
    """A documentation page read for fabric sentences.

    Declare ``facts``; each one whose sentence is found yields a fabric fact with the
    sentence as its evidence. A page where none is found has an unknown layout.
    """

    facts: ClassVar[tuple[DocsFact, ...]] = ()
    item_attributes: ClassVar[dict[str, Any]] = {"obtained_by": "scraped"}

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawFabricFact]:
        text = (
            " ".join(" ".join(response.css("body *::text, body::text").getall()).split())
            if isinstance(response, TextResponse)
            else ""
        )
        found = 0
        for fact in self.facts:
            match = re.search(fact.sentence, text, flags=re.IGNORECASE)
            if match is None:
                assert self.crawler.stats is not None
                self.crawler.stats.inc_value("fabricscope/docs_sentence_missing")
                self.logger.warning(f"{fact.instance_type}: sentence not found on {response.url}")
                continue
            found += 1
            yield RawFabricFact(
                instance_type=fact.instance_type,
                evidence=match.group(0),
                source_url=response.url,
                **fact.fields,
            )
        if not found:
            self.layout_unknown(response, "none of the expected sentences is on the page")
