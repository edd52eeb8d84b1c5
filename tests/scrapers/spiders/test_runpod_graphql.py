"""RunPod's GraphQL gpuTypes (values from the fixture's .source.txt).

``fabricscope.scrapers.tools parse`` replays every saved file as a GET, and this source is a POST,
so these tests run the real offline crawl (``fabricscope.scrapers.tools crawl --offline``): the replay
middleware answers the POST from ``fixtures/runpod_graphql/requests.json`` (matched on
its ``body_hex``) and the run is dumped instead of published.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, python_env
from tests.scrapers.harness import FIXTURES, manifest, offers_by_type

SOURCE = "runpod_graphql"


def crawl_offline(fixtures: Path, work: Path) -> dict[str, Any]:
    dump = work / "run.json"
    settings = {
        "FABRICSCOPE_FIXTURES_DIR": str(fixtures),
        "FABRICSCOPE_PUBLISH_ENABLED": "False",
        "FABRICSCOPE_DUMP_PATH": str(dump),
        "FABRICSCOPE_RAW_DIR": "",
        "FABRICSCOPE_WAREHOUSE": str(work / "absent.duckdb"),
        "LOG_LEVEL": "WARNING",
    }
    args = [sys.executable, "-m", "fabricscope.scrapers.tools", "crawl", SOURCE, "--offline"]
    for name, value in settings.items():
        args += ["--set", f"{name}={value}"]
    result = subprocess.run(
        args, capture_output=True, text=True, env=python_env(), cwd=ROOT, timeout=120, check=False
    )
    assert result.returncode == 0 and dump.is_file(), result.stderr[-3000:]
    return json.loads(dump.read_text())


@pytest.fixture(scope="module")
def parsed(tmp_path_factory):
    return crawl_offline(FIXTURES, tmp_path_factory.mktemp("runpod_graphql"))


def test_the_recording_answers_the_spiders_exact_post_body():
    from fabricscope.scrapers.spiders.runpod_graphql import QUERY

    (entry,) = manifest(SOURCE)
    assert entry["method"] == "POST"
    assert bytes.fromhex(entry["body_hex"]) == json.dumps({"query": QUERY}).encode()


def test_secure_and_community_cloud_are_separate_offers(parsed):
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    offers = offers_by_type(parsed)
    secure = offers[("NVIDIA H100 80GB HBM3 (secure cloud)", "on_demand")]
    assert (secure["gpu_model"], secure["gpu_count"], secure["price_usd_per_gpu_hour"]) == (
        "H100-SXM-80GB",
        1,
        3.49,
    )
    assert (secure["price_basis"], secure["obtained_by"], secure["provider"]) == (
        "per_gpu",
        "api",
        "runpod",
    )
    assert offers[("NVIDIA H100 80GB HBM3 (community cloud)", "on_demand")]["price"] == 2.69
    assert offers[("NVIDIA B200 (secure cloud)", "on_demand")]["price"] == 6.79
    assert offers[("NVIDIA B200 (community cloud)", "on_demand")]["gpu_model"] == "B200-SXM-180GB"
    assert offers[("NVIDIA H200 (secure cloud)", "on_demand")]["price"] == 4.59
    # the id "NVIDIA H200" does not say SXM or NVL; RunPod's displayName "H200 SXM" for it
    # does (instance_gpus.csv), and the NVL card is the separate id "NVIDIA H200 NVL"
    assert offers[("NVIDIA H200 (secure cloud)", "on_demand")]["gpu_model"] == "H200-SXM-141GB"
    a100 = offers[("NVIDIA A100-SXM4-40GB (community cloud)", "on_demand")]
    assert (a100["gpu_model"], a100["price"], a100["gpu_memory_gb"]) == ("A100-SXM-40GB", 1, 40)
    assert offers[("NVIDIA A100 80GB PCIe (secure cloud)", "on_demand")]["gpu_model"] == (
        "A100-PCIE-80GB"
    )
    assert len(offers) == 84


def test_a_zero_price_is_not_an_offer(parsed):
    offers = offers_by_type(parsed)
    # A100 SXM4 40GB: securePrice 0 means not offered in Secure Cloud
    assert ("NVIDIA A100-SXM4-40GB (secure cloud)", "on_demand") not in offers
    assert not [o for o in parsed["offers"] if o["instance_type"].startswith("unknown")]
    assert parsed["stats"]["fabricscope/skipped/not_offered"] == 8
    assert min(o["price"] for o in parsed["offers"]) > 0


def test_mig_slices_are_not_whole_gpus(parsed):
    assert parsed["stats"]["fabricscope/skipped/mig_slice"] == 2
    assert not [o for o in parsed["offers"] if " MIG " in o["instance_type"]]


def test_a_response_it_does_not_know_fails_the_run(tmp_path):
    fixtures = tmp_path / "fixtures"
    (fixtures / SOURCE).mkdir(parents=True)
    (entry,) = manifest(SOURCE)
    other = FIXTURES / "oracle" / "oracle_cetools-products-gpu-subset_20261001.json"
    shutil.copy(other, fixtures / SOURCE / entry["file"])
    (fixtures / SOURCE / "requests.json").write_text(json.dumps([entry]))
    run = crawl_offline(fixtures, tmp_path)
    assert run["status"] == "failed" and run["stats"]["fabricscope/layout_unknown"] == 1
    assert not run["offers"]
