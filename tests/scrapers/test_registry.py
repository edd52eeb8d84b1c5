"""Every spider arrives with its fixture, its SOURCES line, its test and its schedule."""

from __future__ import annotations

import pytest
from apscheduler.triggers.cron import CronTrigger
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings

from fabricscope.scrapers.spiders.base import FabricscopeSpider
from tests.helpers import ROOT
from tests.scrapers.harness import FIXTURES, manifest

LOADER = SpiderLoader.from_settings(get_project_settings())
NAMES = sorted(LOADER.list())


def test_there_are_spiders():
    assert NAMES


@pytest.mark.parametrize("name", NAMES)
def test_file_class_and_name_agree(name):
    spider = LOADER.load(name)
    assert issubclass(spider, FabricscopeSpider)
    assert spider.__module__ == f"fabricscope.scrapers.spiders.{name}"
    assert spider.__name__ == "".join(part.title() for part in name.split("_")) + "Spider"


def reads_local_files_only(name):
    """A curated file in the repository is read from disk, live or offline: no recording."""
    urls = getattr(LOADER.load(name), "start_urls", [])
    return bool(urls) and all(url.startswith("file://") for url in urls)


@pytest.mark.parametrize("name", NAMES)
def test_each_spider_has_fixtures_listed_in_sources(name):
    if reads_local_files_only(name):
        assert not manifest(name)
        return
    entries = manifest(name)
    assert entries, f"fixtures/{name}/requests.json is missing or empty"
    sources = (FIXTURES / "SOURCES.md").read_text()
    for entry in entries:
        assert (FIXTURES / name / entry["file"]).is_file(), entry["file"]
        # replayed data is dated by its recording (or an upper bound, said so in a note)
        assert entry.get("recorded_at"), f"{entry['file']} has no recorded_at"
        assert f"{name}/{entry['file']}" in sources, f"{entry['file']} has no line in SOURCES.md"
    start_urls = set(getattr(LOADER.load(name), "start_urls", []))
    assert start_urls <= {e["url"] for e in entries}, "every start URL needs a recording"


@pytest.mark.parametrize("name", NAMES)
def test_each_spider_has_a_test_and_a_schedule(name):
    assert (ROOT / "tests" / "scrapers" / "spiders" / f"test_{name}.py").is_file()
    CronTrigger.from_crontab(LOADER.load(name).refresh_cron)


# fixtures that are not spider recordings (model calibration and validation data read by
# tests/model, listed in SOURCES.md)
NON_SPIDER_FIXTURES = {"nccl_tests", "published_runs"}


def test_every_fixture_folder_belongs_to_a_spider():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()} - NON_SPIDER_FIXTURES
    assert folders <= set(NAMES)
