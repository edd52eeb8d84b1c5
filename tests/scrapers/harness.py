"""Run a spider and its item pipelines on recorded responses, through the real crawler."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from tests.helpers import ROOT, python_env

FIXTURES = ROOT / "fixtures"


def _isolated_env() -> dict[str, str]:
    """The spiders' anomaly check compares prices with a warehouse's history: point it at
    none, so a developer's own data/warehouse.duckdb never changes what a test sees."""
    return {**python_env(), "FABRICSCOPE_WAREHOUSE": str(ROOT / "tests" / "no-warehouse.duckdb")}


def manifest(source: str) -> list[dict[str, Any]]:
    path = FIXTURES / source / "requests.json"
    return json.loads(path.read_text()) if path.is_file() else []


_PARSED: dict[tuple[str, str, str | None], dict[str, Any]] = {}


def _start_url(source: str) -> str | None:
    from scrapy.spiderloader import SpiderLoader
    from scrapy.utils.project import get_project_settings

    urls = SpiderLoader.from_settings(get_project_settings()).load(source).start_urls
    return urls[0] if urls else None


def _preload() -> None:
    """Parse every recording of every spider in one crawl process (one process start)."""
    from scrapy.spiderloader import SpiderLoader
    from scrapy.utils.project import get_project_settings

    cases = [
        {
            "source": name,
            "file": str(FIXTURES / name / entry["file"]),
            "url": entry["url"],
            "key": [name, entry["file"], entry["url"]],
        }
        for name in sorted(SpiderLoader.from_settings(get_project_settings()).list())
        for entry in manifest(name)
    ]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "fabricscope.scrapers.tools", "parse-many", handle.name],
            capture_output=True,
            text=True,
            env=_isolated_env(),
            cwd=ROOT,
            timeout=600,
            check=False,
        )
    finally:
        Path(handle.name).unlink()
    assert result.returncode == 0, result.stderr[-3000:]
    for case, parsed in zip(cases, json.loads(result.stdout), strict=True):
        _PARSED[tuple(case["key"])] = parsed


def parse_fixture(source: str, fixture: str, url: str | None = None) -> dict[str, Any]:
    """What the source would publish from ``fixtures/<source>/<fixture>`` (nothing is).

    The spider's own request (a POST with its body, say) is answered with the file, as
    `fabricscope parse` does; a documentation example (``"constructed": true``, which an
    offline refresh refuses to replay) is parsed like any recording. Every recording
    listed in a manifest is parsed once per test session, all in one crawl process;
    other files (another provider's page, say) get a process of their own.
    """
    if not _PARSED:
        _preload()
    key = (source, fixture, url or _start_url(source))
    if key not in _PARSED:
        _PARSED[key] = _parse_one(source, fixture, url)
    return _PARSED[key]


@cache
def _parse_one(source: str, fixture: str, url: str | None) -> dict[str, Any]:
    args = [
        sys.executable,
        "-m",
        "fabricscope.scrapers.tools",
        "parse",
        source,
        str(FIXTURES / source / fixture),
    ]
    if url:
        args += ["--url", url]
    result = subprocess.run(
        args,
        capture_output=True,
        text=True,
        env=_isolated_env(),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def offers_by_type(parsed: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["instance_type"], o["pricing_tier"]): o for o in parsed["offers"]}


def fixture_rows(source: str, fixture: str) -> list[dict[str, str]]:
    """A recorded CSV's rows as the file holds them, to check a spider against."""
    with (FIXTURES / source / fixture).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def offer_at(
    parsed: dict[str, Any], instance_type: str, region: str | None, tier: str
) -> dict[str, Any]:
    """The one offer of ``instance_type`` in ``region`` on ``tier``."""
    return next(
        o
        for o in parsed["offers"]
        if (o["instance_type"], o["region"], o["pricing_tier"]) == (instance_type, region, tier)
    )
