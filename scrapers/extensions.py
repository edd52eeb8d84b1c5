"""The run ledger: when a spider closes, decide its outcome and publish it (or not)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler

from warehouse.db import WarehouseError
from warehouse.load import RunBatch, fabric_table, offers_table, publish_run
from warehouse.models import RunStatus


class RunLedger:
    """Publishes each source's run through the warehouse's snapshot protocol.

    A run with too few items or too many invalid ones is recorded as failed and
    publishes no rows, so the source keeps its last good data.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        settings = crawler.settings
        self.publish = settings.getbool("FABRICSCOPE_PUBLISH_ENABLED", True)
        self.warehouse = Path(settings.get("FABRICSCOPE_WAREHOUSE"))
        self.max_drop_share = settings.getfloat("FABRICSCOPE_MAX_DROP_SHARE", 0.5)
        self.lock_wait_s = settings.getfloat("FABRICSCOPE_LOCK_WAIT_S", 120.0)
        self.events = settings.getbool("FABRICSCOPE_EVENTS_ENABLED", False)
        self.dump_path = settings.get("FABRICSCOPE_DUMP_PATH")
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RunLedger:
        return cls(crawler)

    def _event(self, **fields: Any) -> None:
        if self.events:  # one JSON line per event on stdout, read by `fabricscope refresh`
            sys.stdout.write(json.dumps(fields, default=str) + "\n")
            sys.stdout.flush()

    def spider_opened(self, spider: Spider) -> None:
        self._event(event="opened", source=spider.name, run_id=spider.run.run_id)  # type: ignore[attr-defined]

    def spider_closed(self, spider: Spider, reason: str) -> None:
        run = spider.run  # type: ignore[attr-defined]
        assert self.crawler.stats is not None
        stats = dict(self.crawler.stats.get_stats())
        status, error = run.outcome(
            reason, stats, getattr(spider, "min_items", 1), self.max_drop_share
        )
        record = run.record(status, error, stats)
        self.crawler.stats.set_value("fabricscope/status", status.value)
        published_status = status
        if self.publish:
            batch = RunBatch(
                record,
                offers_table(run.offers) if status is RunStatus.OK else None,
                fabric_table(run.facts) if status is RunStatus.OK else None,
                run.quarantined,
            )
            try:
                published_status, result = publish_run(
                    self.warehouse, batch, lock_wait_s=self.lock_wait_s
                )
            except WarehouseError as exc:  # Scrapy would swallow it: say it, loudly
                published_status, error = RunStatus.FAILED, f"not published: {exc}"
            else:
                for note in result.notes:
                    spider.logger.info(note)
        if error:
            spider.logger.error(f"run {run.run_id} {published_status.value}: {error}")
        if self.dump_path:  # `fabricscope parse`: everything the run would have published
            Path(self.dump_path).write_text(
                json.dumps(
                    {
                        "source": spider.name,
                        "status": status.value,
                        "error": error,
                        "scraped": run.scraped,
                        "dropped": dict(run.dropped),
                        "offers": [o.model_dump(mode="json") for o in run.offers],
                        "fabric_facts": [f.model_dump(mode="json") for f in run.facts],
                        "quarantined": [
                            {"reason": q.reason, "item": q.raw} for q in run.quarantined
                        ],
                        "stats": {k: v for k, v in stats.items() if k.startswith("fabricscope/")},
                    },
                    indent=2,
                    default=str,
                )
            )
        self._event(
            event="closed",
            source=spider.name,
            run_id=run.run_id,
            status=published_status.value,
            error=error,
            scraped=run.scraped,
            offers=len(run.offers),
            facts=len(run.facts),
            dropped=dict(run.dropped),
            quarantined=len(run.quarantined),
            published=self.publish,
        )
