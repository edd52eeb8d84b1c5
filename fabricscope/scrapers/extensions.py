"""The run ledger: when a spider closes, decide its outcome and publish it (or not)."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from scrapy import Spider, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider
from scrapy.utils.defer import deferred_from_coro
from twisted.internet.task import LoopingCall

from fabricscope.warehouse.db import WarehouseError
from fabricscope.warehouse.load import RunBatch, fabric_table, offers_table, publish_run
from fabricscope.warehouse.models import RunStatus

logger = logging.getLogger(__name__)

# How often a running spider checks that the refresh that started it is still there.
PARENT_CHECK_S = 0.2
PARENT_GONE = (
    "the refresh that started this crawl ended before this run was published (killed or "
    "crashed); run `fabricscope refresh` again"
)


def parent_gone(parent_pid: int) -> bool:
    """The process that started this crawl (``parent_pid``; 0: none to watch) has died: this
    process was handed to another parent. Once true, true for good."""
    return parent_pid > 0 and os.getppid() != parent_pid


class RunLedger:
    """Publishes each source's run through the warehouse's snapshot protocol.

    A run with too few items or too many invalid ones is recorded as failed and
    publishes no rows, so the source keeps its last good data.

    A crawl never outlives the refresh that started it (``FABRICSCOPE_PARENT_PID``): once
    that process is gone, no spider opens (nothing is recorded for it), a running spider is
    stopped within ``PARENT_CHECK_S`` (its run recorded aborted), and no run is recorded ok.
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
        self.parent_pid = settings.getint("FABRICSCOPE_PARENT_PID", 0)
        self.refused = False  # not opened: its refresh was already gone
        self.watch = LoopingCall(self._stop_if_orphaned)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RunLedger:
        return cls(crawler)

    def _event(self, **fields: Any) -> None:
        if not self.events:
            return
        try:  # one JSON line per event on stdout, read by `fabricscope refresh`
            sys.stdout.write(json.dumps(fields, default=str) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):  # the reader is gone; say it once, not per spider
            logger.warning(
                "the refresh reading this crawl's events is gone (its pipe is closed): "
                "no more events are sent"
            )
            # every later write (other spiders, the exit's flush) goes nowhere, silently
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)

    def spider_opened(self, spider: Spider) -> None:
        if parent_gone(self.parent_pid):
            self.refused = True
            raise CloseSpider("shutdown")  # Scrapy closes it before its engine starts
        self._event(event="opened", source=spider.name, run_id=spider.run.run_id)  # type: ignore[attr-defined]

    def _must_stop(self) -> bool:
        """Its refresh is gone, or Scrapy was asked to stop while this engine was still
        starting: ``Crawler.stop_async()`` then only clears ``crawling`` (Scrapy 2.19), and
        the spider would run to the end and its crawl never return."""
        return parent_gone(self.parent_pid) or not self.crawler.crawling

    async def engine_started(self) -> None:
        if self._must_stop():  # Scrapy's engine returns at once when stopped from here
            await self.crawler.engine.stop_async()
        else:
            self.watch.start(PARENT_CHECK_S, now=False)

    def _stop_if_orphaned(self) -> None:
        if self.crawler.engine.running and self._must_stop():
            self.watch.stop()
            deferred_from_coro(self._stop_engine()).addErrback(
                lambda failure: logger.error(f"cannot stop the crawl: {failure.value!r}")
            )

    async def _stop_engine(self) -> None:
        engine = self.crawler.engine
        if engine.running:  # unless Scrapy stopped it meanwhile (stopping twice raises)
            await engine.stop_async()

    def spider_closed(self, spider: Spider, reason: str) -> None:
        if self.watch.running:
            self.watch.stop()
        if self.refused:  # it never started: nothing to record, and no one to tell
            spider.logger.info("not crawled: the refresh that started this crawl is gone")
            return
        run = spider.run  # type: ignore[attr-defined]
        assert self.crawler.stats is not None
        stats = dict(self.crawler.stats.get_stats())
        status, error = run.outcome(
            reason, stats, getattr(spider, "min_items", 1), self.max_drop_share
        )
        record = run.record(status, error, stats)
        # checked after the record's finished_at was taken: an ok run finished before its
        # refresh died, whenever the kill came
        if status is RunStatus.OK and parent_gone(self.parent_pid):
            status, error = RunStatus.ABORTED, PARENT_GONE
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
