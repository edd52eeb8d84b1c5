"""Fabric facts entered by hand from cited pages:
``fabricscope/scrapers/curated/fabric_facts.csv``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from scrapy.http import Response

from fabricscope.scrapers.items import RawFabricFact
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

FACTS_CSV = Path(__file__).resolve().parent.parent / "curated" / "fabric_facts.csv"
# One column per RawFabricFact field the file fills; gpu_model is set by the pipelines.
COLUMNS = tuple(name for name in RawFabricFact.fields if name != "gpu_model")


class CuratedFabricSpider(CsvCatalogSpider):
    name = "curated_fabric"
    start_urls = [FACTS_CSV.as_uri()]  # a local file: read from disk, live or offline
    refresh_cron = "37 2 * * *"
    item_attributes = {"obtained_by": "curated"}
    required_columns = frozenset(COLUMNS)

    def parse_row(self, row: dict[str, str], response: Response) -> Iterator[RawFabricFact]:
        # source_url is the row's cited page, not the file this was read from
        yield RawFabricFact({name: row[name] for name in COLUMNS})
