"""Scrapy settings for fabricscope's spiders.

Our own settings are prefixed ``FABRICSCOPE_`` and can be switched per run with
``-s NAME=value`` or the environment variables of the same name.
"""

from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]


def _env_flag(name: str, default: bool = False) -> bool:
    return os.environ.get(name, str(default)).strip().lower() in {"1", "true", "yes", "on"}


BOT_NAME = "fabricscope"
SPIDER_MODULES = ["fabricscope.scrapers.spiders"]
NEWSPIDER_MODULE = "fabricscope.scrapers.spiders"

# Politeness: obey robots.txt, say who we are, one request at a time per site.
ROBOTSTXT_OBEY = True
USER_AGENT = (
    "fabricscope/0.1 (GPU cloud price and fabric comparison; +https://github.com/fabricscope)"
)
CONCURRENT_REQUESTS_PER_DOMAIN = 1
DOWNLOAD_DELAY = 1.0
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
# Per-source values live in each spider's custom_settings; these are the defaults.
DOWNLOAD_TIMEOUT = 30
# The largest response a source may send: the biggest catalog read live (AWS's SkyPilot CSV)
# is about 3 MB; a 200 MB page once held a crawl near 1 GB of memory forever. Above the cap
# the download is cancelled and the source's run fails (its last good data stays).
DOWNLOAD_MAXSIZE = 64 * 1024 * 1024
DOWNLOAD_WARNSIZE = 16 * 1024 * 1024
CLOSESPIDER_TIMEOUT = 300
RETRY_ENABLED = True
RETRY_TIMES = 2
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
FEED_EXPORT_ENCODING = "utf-8"
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = os.environ.get("FABRICSCOPE_SCRAPY_LOG_LEVEL", "INFO")

DOWNLOADER_MIDDLEWARES = {
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "fabricscope.scrapers.middlewares.RetryAfterMiddleware": 550,
    # replay answers before anything reaches the network; record sees what came back
    "fabricscope.scrapers.middlewares.ReplayMiddleware": 50,
    "fabricscope.scrapers.middlewares.RecordMiddleware": 60,
}
ITEM_PIPELINES = {
    "fabricscope.scrapers.pipelines.raw_feed.RawFeedPipeline": 100,
    "fabricscope.scrapers.pipelines.constants.ApplyConstantsPipeline": 200,
    "fabricscope.scrapers.pipelines.clean.CleanPipeline": 300,
    "fabricscope.scrapers.pipelines.normalise.NormalisePipeline": 400,
    "fabricscope.scrapers.pipelines.validate.ValidatePipeline": 500,
    "fabricscope.scrapers.pipelines.anomaly.AnomalyPipeline": 600,
    "fabricscope.scrapers.pipelines.stage.StagePipeline": 700,
}
EXTENSIONS = {"fabricscope.scrapers.extensions.RunLedger": 500}

FABRICSCOPE_WAREHOUSE = os.environ.get("FABRICSCOPE_WAREHOUSE", "data/warehouse.duckdb")
FABRICSCOPE_RAW_DIR = os.path.join(os.environ.get("FABRICSCOPE_DATA_DIR", "data"), "raw")
FABRICSCOPE_FIXTURES_DIR = os.environ.get("FABRICSCOPE_FIXTURES_DIR", str(_ROOT / "fixtures"))
FABRICSCOPE_REPLAY_ENABLED = _env_flag("FABRICSCOPE_OFFLINE")
FABRICSCOPE_RECORD_ENABLED = False
FABRICSCOPE_PUBLISH_ENABLED = True
FABRICSCOPE_EVENTS_ENABLED = False
# A run fails when more than this share of its items is invalid.
FABRICSCOPE_MAX_DROP_SHARE = 0.5
FABRICSCOPE_RETRY_AFTER_MAX_S = 60.0
FABRICSCOPE_LOCK_WAIT_S = 120.0
# The process this crawl must not outlive (set by `fabricscope.scrapers.tools crawl`; 0: none):
# once it is gone no spider opens, running ones stop, and no run is recorded ok.
FABRICSCOPE_PARENT_PID = 0
# Credentials for APIs that need them; never logged, never stored in fixtures.
FABRICSCOPE_LAMBDA_API_KEY = os.environ.get("FABRICSCOPE_LAMBDA_API_KEY", "")
