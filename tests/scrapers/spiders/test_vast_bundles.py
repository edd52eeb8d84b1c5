"""Vast.ai search offers API, on the docs' own example response (no recording exists).

The example tests the spider's parsing; an offline refresh never publishes it.
"""

from __future__ import annotations

from typing import Any

from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings

from fabricscope.warehouse.db import read_frames
from tests.scrapers.harness import manifest, parse_fixture

EXAMPLE = "vast-bundles-get_docs-example.json"


def test_docs_example_offer():
    parsed = parse_fixture("vast_bundles", EXAMPLE)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    [offer] = parsed["offers"]
    assert offer["provider"] == "vast_ai" and offer["obtained_by"] == "api"
    # dph_total is the whole offer's price per hour, on demand
    assert (offer["price_usd_per_hour"], offer["price_basis"], offer["pricing_tier"]) == (
        0.45,
        "per_instance",
        "on_demand",
    )
    assert (offer["gpu_name"], offer["gpu_count"]) == ("RTX 4090", 1)
    # no machine_id in the example: the offer id names it; no gpu_ram, no geolocation
    assert offer["instance_type"] == "1x RTX 4090 (offer 12345)"
    assert offer["gpu_memory_gb"] is None and offer["region"] is None
    # "RTX 4090" names one card (24 GB) in gpus.csv
    assert offer["gpu_model"] == "RTX4090-PCIE-24GB"
    assert "fabricscope/gpu_unmapped" not in parsed["stats"]


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("vast_bundles", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1


def constructed_recordings() -> list[tuple[str, dict[str, Any]]]:
    """Manifest entries built from documentation examples, not recorded, for every source."""
    names = SpiderLoader.from_settings(get_project_settings()).list()
    return [(n, e) for n in sorted(names) for e in manifest(n) if e.get("constructed")]


def test_the_docs_example_is_marked_constructed():
    assert ("vast_bundles", EXAMPLE) in {(n, e["file"]) for n, e in constructed_recordings()}


def test_an_offline_refresh_never_publishes_a_documentation_example(fixture_warehouse):
    examples = constructed_recordings()
    _, frames = read_frames(
        fixture_warehouse,
        {
            "offers": "select source, source_url, instance_type from offers_current",
            "facts": "select source, source_url from fabric_current",
            "runs": "select source, status, error_text, scrapy_stats from scrape_runs "
            "order by finished_at",
        },
    )
    example_urls = {(n, e["url"]) for n, e in examples}
    for name in ("offers", "facts"):
        published = set(zip(frames[name]["source"], frames[name]["source_url"], strict=True))
        assert not published & example_urls, name
    assert "1x RTX 4090 (offer 12345)" not in set(frames["offers"]["instance_type"])
    # a source whose every recording is an example has nothing to replay: its run failed
    # with the reason, and it published nothing
    runs = frames["runs"].drop_duplicates("source", keep="last").set_index("source")
    for source in {n for n, _ in examples}:
        if all(e.get("constructed") for e in manifest(source)):
            assert source not in set(frames["offers"]["source"]), source
            run = runs.loc[source]
            assert run["status"] == "failed", (source, run.to_dict())
            assert "documentation example" in run["error_text"], run["error_text"]
            assert "fabricscope/replay/constructed_refused" in run["scrapy_stats"]
    # the rest of the refresh still published (vast.ai's catalog source among them)
    assert "skypilot_vast" in set(frames["offers"]["source"])
