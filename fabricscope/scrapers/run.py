"""One crawl of one source: what it collected, and whether it may publish."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fabricscope.warehouse.load import QuarantinedItem, RunRecord, new_run_id
from fabricscope.warehouse.models import FabricFact, Offer, RunMode, RunStatus, utc_now

# Drops that say nothing bad about the page: a "Contact sales" row has no price to publish.
BENIGN_DROPS = frozenset({"no_price", "duplicate"})
# Replay refusals (fabricscope/scrapers/middlewares.py), counted in Scrapy stats and explained here.
UNKNOWN_URL = "fabricscope/replay/unknown_url"
CONSTRUCTED_REFUSED = "fabricscope/replay/constructed_refused"


@dataclass
class RunCollector:
    source: str
    mode: RunMode
    run_id: str = ""
    started_at: datetime = field(default_factory=utc_now)
    # When the data was seen: now when live; the recording's date when replayed.
    observed_at: datetime | None = None
    scraped: int = 0
    offers: list[Offer] = field(default_factory=list)
    facts: list[FabricFact] = field(default_factory=list)
    quarantined: list[QuarantinedItem] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.run_id = self.run_id or new_run_id(self.source)

    def saw_recording_from(self, recorded_at: datetime) -> None:
        """A replayed response: its data is as old as the recording (the oldest wins)."""
        if self.observed_at is None or recorded_at < self.observed_at:
            self.observed_at = recorded_at

    @property
    def items(self) -> int:
        return len(self.offers) + len(self.facts)

    def outcome(
        self, finish_reason: str, stats: dict[str, Any], min_items: int, max_drop_share: float
    ) -> tuple[RunStatus, str | None]:
        """ok, or failed/aborted with a reason a person can act on."""
        if finish_reason == "shutdown":
            return RunStatus.ABORTED, "the crawl was stopped before it finished"
        if finish_reason != "finished":
            return (
                RunStatus.FAILED,
                f"the crawl ended early ({finish_reason}); {_http_summary(stats)}",
            )
        if self.items < min_items and stats.get(CONSTRUCTED_REFUSED):
            return RunStatus.FAILED, (
                f"no real recording to replay: fixtures/{self.source} answers this source's "
                "requests with a documentation example (constructed, not prices), which tests "
                "the spider but is never published; record a real response with "
                f"`fabricscope refresh --live --record --source {self.source}`"
            )
        if self.items < min_items:
            dropped = ", ".join(f"{r} {n}" for r, n in self.dropped.most_common())
            return RunStatus.FAILED, (
                f"{self.items} items (at least {min_items} expected)"
                + (f"; dropped: {dropped}" if dropped else "")
                + f"; {_http_summary(stats)}"
            )
        harmful = sum(n for reason, n in self.dropped.items() if reason not in BENIGN_DROPS)
        if self.scraped and harmful / self.scraped > max_drop_share:
            reasons = ", ".join(f"{r} {n}" for r, n in self.dropped.most_common())
            return RunStatus.FAILED, (
                f"{harmful} of {self.scraped} items were invalid (more than "
                f"{max_drop_share:.0%}): {reasons}"
            )
        return RunStatus.OK, None

    def record(self, status: RunStatus, error: str | None, stats: dict[str, Any]) -> RunRecord:
        return RunRecord(
            run_id=self.run_id,
            source=self.source,
            mode=self.mode,
            started_at=self.started_at,
            finished_at=utc_now(),
            status=status,
            items_scraped=self.scraped,
            items_dropped=sum(self.dropped.values()),
            dropped_by_reason=dict(self.dropped),
            error_text=error,
            scrapy_stats=stats,
        )


def _http_summary(stats: dict[str, Any]) -> str:
    """What went wrong on the wire or in parsing, from Scrapy's stats."""
    parts: list[str] = []
    for key, value in sorted(stats.items()):
        if key.startswith("downloader/response_status_count/") and not key.endswith("/200"):
            parts.append(f"HTTP {key.rsplit('/', 1)[1]} x{value}")
        elif key.startswith("downloader/exception_type_count/"):
            parts.append(f"{key.rsplit('.', 1)[-1]} x{value}")
    if stats.get("retry/max_reached"):
        parts.append("retries exhausted")
    if stats.get("fabricscope/layout_unknown"):
        parts.append("the page layout was not recognised")
    if stats.get(UNKNOWN_URL):
        parts.append("no recorded response for a requested URL (offline)")
    if stats.get(CONSTRUCTED_REFUSED):
        parts.append("a documentation example was not replayed (offline)")
    for key, value in sorted(stats.items()):
        if key.startswith("fabricscope/skipped/"):
            parts.append(f"skipped {key.rsplit('/', 1)[1]} x{value}")
    return "; ".join(parts) or "no errors were logged"
