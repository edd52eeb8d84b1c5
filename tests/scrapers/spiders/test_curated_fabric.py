"""The curated fabric facts file, read from disk by its spider: every row becomes one fact."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from scrapers.spiders.curated_fabric import FACTS_CSV
from tests.helpers import ROOT, python_env
from tests.scrapers.harness import FIXTURES


@cache
def parse_local(path: Path) -> dict[str, Any]:
    """Like harness.parse_fixture, for a file:// URL: the file is read from disk, not replayed."""
    args = ["parse", "curated_fabric", str(path), "--url", path.as_uri()]
    result = subprocess.run(
        [sys.executable, "-m", "scrapers.tools", *args],
        capture_output=True,
        text=True,
        env=python_env(),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def curated_rows() -> list[dict[str, str]]:
    with FACTS_CSV.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def facts_by_key() -> dict[tuple[str, str], dict[str, Any]]:
    parsed = parse_local(FACTS_CSV)
    return {(f["provider"], f["instance_type"]): f for f in parsed["fabric_facts"]}


def test_every_row_becomes_one_fact_and_nothing_is_dropped():
    parsed = parse_local(FACTS_CSV)
    rows = curated_rows()
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["scraped"] == len(rows) == len(parsed["fabric_facts"]) == 39
    assert parsed["dropped"] == {} and parsed["quarantined"] == []
    facts = facts_by_key()
    assert set(facts) == {(r["provider"], r["instance_type"]) for r in rows}
    for row in rows:
        fact = facts[(row["provider"], row["instance_type"])]
        # the quote and its page are published as entered
        assert fact["evidence"] == row["evidence"] and fact["source_url"] == row["source_url"]
        assert fact["obtained_by"] == "curated" and fact["source"] == "curated_fabric"


def test_aws_p5_efa_3200_per_node():
    p5 = facts_by_key()[("aws", "p5.48xlarge")]
    assert (p5["fabric_class"], p5["fabric_gbps_per_node"]) == ("efa", 3200.0)
    assert p5["fabric_product"] == "EFA v2 (32 x 100GbE NICs)"
    assert p5["gpu_model"] == "H100-SXM-80GB" and p5["source_date"] == "2025-03-09"
    # not stated in the source: stays unknown (per-GPU is never derived from the node figure)
    assert p5["fabric_gbps_per_gpu"] is None and p5["max_cluster_gpus"] is None
    assert p5["topology"] is None and p5["published_benchmark_url"] is None


def test_infiniband_rows():
    facts = facts_by_key()
    voltage = facts[("voltage_park", "On-demand bare-metal HGX H100 (8x)")]
    assert (voltage["fabric_class"], voltage["fabric_gbps_per_node"]) == ("infiniband", 3200.0)
    assert voltage["evidence"] == (
        "The nodes were heavily networked, connected via 3.2 Tbps InfiniBand with 400 Gbps per port."
    )
    assert voltage["gpudirect_rdma"] is None  # "unknown" in the source
    assert voltage["source_date"] is None  # the source gives a month (2026-04), not a date
    coreweave = facts[("coreweave", "HGX H100 (InfiniBand node pools)")]
    assert coreweave["fabric_class"] == "infiniband"
    assert coreweave["topology"] == "non-blocking fat tree"
    assert coreweave["fabric_gbps_per_node"] is None and coreweave["fabric_gbps_per_gpu"] is None
    assert (coreweave["rdma"], coreweave["gpudirect_rdma"], coreweave["multi_node"]) == (
        True,
        True,
        True,
    )
    azure = facts[("azure", "Standard_ND96isr_H100_v5 (ND H100 v5)")]
    assert (azure["fabric_gbps_per_node"], azure["fabric_gbps_per_gpu"]) == (3200.0, 400.0)


def test_other_values_as_entered():
    facts = facts_by_key()
    b200 = facts[("oracle", "BM.GPU.B200.8")]
    assert (b200["fabric_class"], b200["max_cluster_gpus"], b200["fabric_gbps_per_gpu"]) == (
        "roce",
        131072,
        400.0,
    )
    assert b200["fabric_gbps_per_node"] is None
    a2 = facts[("gcp", "A2 (a2-highgpu-8g / a2-ultragpu-8g)")]
    assert (a2["fabric_class"], a2["rdma"], a2["gpudirect_rdma"], a2["multi_node"]) == (
        "ethernet",
        False,
        False,
        None,
    )
    # "H100 / H200" names two models: unmapped, not guessed
    nebius = facts[("nebius", "gpu-h100-sxm / gpu-h200-sxm (8gpu)")]
    assert nebius["gpu_name"] == "H100 / H200" and nebius["gpu_model"] is None
    runpod = facts[("runpod", "Instant Clusters")]
    assert (runpod["fabric_class"], runpod["multi_node"], runpod["gpu_name"]) == (
        "unknown",
        True,
        None,
    )


def test_a_file_that_is_not_the_facts_csv_fails_the_run():
    html = FIXTURES / "lambda_cloud" / "lambda_pricing-page_20260109.html"
    parsed = parse_local(html)
    assert parsed["status"] == "failed" and parsed["fabric_facts"] == []
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
