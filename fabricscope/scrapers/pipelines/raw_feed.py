"""Keep every item exactly as the spider yielded it, one JSON line each, per run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from fabricscope.scrapers.items import RawItem
from fabricscope.scrapers.pipelines import FabricscopePipeline


class RawFeedPipeline(FabricscopePipeline):
    _handle: IO[str] | None = None

    def open_spider(self) -> None:
        directory = self.crawler.settings.get("FABRICSCOPE_RAW_DIR")
        if directory:
            path = Path(directory) / self.run.source / f"{self.run.run_id}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = path.open("w", encoding="utf-8")

    def close_spider(self) -> None:
        if self._handle is not None:
            self._handle.close()

    def process_item(self, item: RawItem) -> RawItem:
        self.run.scraped += 1
        if self._handle is not None:
            record = {"kind": type(item).__name__, **dict(item)}
            self._handle.write(json.dumps(record, default=str, sort_keys=True) + "\n")
        return item
