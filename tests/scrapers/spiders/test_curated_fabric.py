"""The curated fabric facts file, read from disk by its spider: every row becomes one fact, keyed
by the exact instance type an offer carries (or a product line a sourced row maps offers to)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabricscope.scrapers.spiders.curated_fabric import FACTS_CSV
from tests.helpers import ROOT, python_env
from tests.scrapers.harness import FIXTURES

PRODUCT_LINES_CSV = ROOT / "fabricscope" / "warehouse" / "reference" / "fabric_product_lines.csv"
GRADES = {"provider", "measured", "third_party"}


@cache
def parse_local(path: Path) -> dict[str, Any]:
    """Like harness.parse_fixture, for a file:// URL: the file is read from disk, not replayed."""
    args = ["parse", "curated_fabric", str(path), "--url", path.as_uri()]
    result = subprocess.run(
        [sys.executable, "-m", "fabricscope.scrapers.tools", *args],
        capture_output=True,
        text=True,
        env=python_env(),
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def curated_rows() -> list[dict[str, str]]:
    return read_csv(FACTS_CSV)


def product_lines() -> list[dict[str, str]]:
    return read_csv(PRODUCT_LINES_CSV)


def facts_by_key() -> dict[tuple[str, str], dict[str, Any]]:
    parsed = parse_local(FACTS_CSV)
    return {(f["provider"], f["instance_type"]): f for f in parsed["fabric_facts"]}


def catalog_instance_types(source: str) -> set[str]:
    """InstanceType values of the recorded SkyPilot catalog(s) of one source."""
    paths = sorted((FIXTURES / source).glob("*.csv"))
    if not paths:
        pytest.fail(f"no recorded catalog under fixtures/{source}/")
    return {row["InstanceType"] for path in paths for row in read_csv(path)}


def test_every_row_becomes_one_fact_and_nothing_is_dropped():
    parsed = parse_local(FACTS_CSV)
    rows = curated_rows()
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["scraped"] == len(rows) == len(parsed["fabric_facts"])
    assert parsed["dropped"] == {} and parsed["quarantined"] == []
    facts = facts_by_key()
    keys = [(r["provider"], r["instance_type"]) for r in rows]
    assert len(set(keys)) == len(keys), "one row per provider and instance type"
    assert set(facts) == set(keys)
    for row in rows:
        fact = facts[(row["provider"], row["instance_type"])]
        # the quote and its page are published as entered
        assert fact["evidence"] == row["evidence"] and fact["source_url"] == row["source_url"]
        assert fact["obtained_by"] == "curated" and fact["source"] == "curated_fabric"
        assert fact["source_grade"] == row["source_grade"]


def test_every_row_is_graded_and_quotes_its_source():
    for row in curated_rows():
        where = f"{row['provider']}/{row['instance_type']}"
        assert row["source_grade"] in GRADES, where
        assert row["evidence"].strip(), where
        assert re.match(r"https?://", row["source_url"]), where
        assert re.fullmatch(r"(\d{4}-\d{2}-\d{2})?", row["source_date"]), where
        # a single-node MLPerf inference system file is not evidence of a multi-node fabric
        assert "inference_results" not in row["source_url"], where


def test_instance_types_are_exact_names_not_descriptions():
    """Offers link by exact instance type: the hyperscalers' rows carry their SKU names, which
    the recorded catalogs contain."""
    names = {
        "aws": catalog_instance_types("skypilot_aws"),
        "gcp": catalog_instance_types("skypilot_gcp"),
        "azure": catalog_instance_types("skypilot_azure"),
        "oracle": catalog_instance_types("skypilot_oci"),
        "nebius": catalog_instance_types("skypilot_nebius"),
    }
    lines = {(r["provider"], r["product_line"]) for r in product_lines()}
    for row in curated_rows():
        provider, instance_type = row["provider"], row["instance_type"]
        if provider in names and (provider, instance_type) not in lines:
            assert " " not in instance_type and "(" not in instance_type, instance_type
    # the 8-GPU (or larger) types of the catalogs that a source covers all have a fact
    facts = facts_by_key()
    covered = {
        "aws": """p3.16xlarge p3dn.24xlarge p4d.24xlarge p4de.24xlarge p5.48xlarge p5e.48xlarge
            p5en.48xlarge p6-b200.48xlarge g4dn.metal g5.48xlarge g6.48xlarge g6e.48xlarge""",
        "gcp": """a2-highgpu-8g a2-megagpu-16g a2-ultragpu-8g a3-edgegpu-8g a3-highgpu-8g
            a3-megagpu-8g a3-ultragpu-8g a4-highgpu-8g g2-standard-96""",
        "azure": """Standard_ND40rs_v2 Standard_ND96asr_v4 Standard_ND96amsr_A100_v4
            Standard_ND96isr_H100_v5""",
        "oracle": "BM.GPU4.8 BM.GPU.A100-v2.8 BM.GPU.H100.8 BM.GPU.H200.8 BM.GPU.B200.8",
        "nebius": """gpu-h100-sxm_8gpu-128vcpu-1600gb gpu-h200-sxm_8gpu-128vcpu-1600gb
            gpu-b200-sxm_8gpu-160vcpu-1792gb""",
    }
    for provider, instance_types in covered.items():
        for instance_type in instance_types.split():
            assert instance_type in names[provider], f"{provider}/{instance_type} not in catalog"
            assert (provider, instance_type) in facts, f"{provider}/{instance_type} has no fact"


def test_every_product_line_row_names_a_fact_of_its_provider():
    facts = facts_by_key()
    rows = product_lines()
    assert rows
    keys = [(r["provider"], r["instance_type"]) for r in rows]
    assert len(set(keys)) == len(keys)
    for row in rows:
        where = f"{row['provider']}/{row['instance_type']}"
        assert (row["provider"], row["product_line"]) in facts, where
        # an exact fact would win anyway: a line row for it is dead weight
        assert (row["provider"], row["instance_type"]) not in facts, where
        assert re.search(r"https?://|fixtures/", row["source"]), where


def test_product_line_rows_name_real_offers():
    vast = catalog_instance_types("skypilot_vast")
    reseller = catalog_instance_types("skypilot_primeintellect")
    for row in product_lines():
        if row["provider"] == "vast_ai":
            assert row["instance_type"] in vast, row
        if row["instance_type"].startswith("nebius__"):
            assert row["instance_type"] in reseller, row


def test_aws_p5_is_efa_3200_per_node_from_aws():
    p5 = facts_by_key()[("aws", "p5.48xlarge")]
    assert (p5["fabric_class"], p5["fabric_gbps_per_node"]) == ("efa", 3200.0)
    assert p5["source_grade"] == "provider"
    assert p5["source_url"].startswith("https://github.com/aws/karpenter-provider-aws/")
    assert "|karpenter.k8s.aws/instance-network-bandwidth|3200000|" in p5["evidence"]
    assert p5["fabric_product"] == "EFA (32 EFA devices)" and p5["multi_node"] is True
    assert p5["source_date"] == "2026-07-11"
    # not stated in the source: stays unknown (per-GPU is never derived from the node figure)
    assert p5["fabric_gbps_per_gpu"] is None and p5["max_cluster_gpus"] is None
    assert p5["rdma"] is None and p5["topology"] is None
    p4d = facts_by_key()[("aws", "p4d.24xlarge")]
    assert (p4d["fabric_gbps_per_node"], p4d["rdma"], p4d["gpudirect_rdma"]) == (400.0, True, True)
    p3 = facts_by_key()[("aws", "p3.16xlarge")]
    assert (p3["fabric_class"], p3["fabric_gbps_per_node"], p3["multi_node"]) == (
        "ethernet",
        25.0,
        None,
    )


def test_google_and_azure_rows():
    facts = facts_by_key()
    a3 = facts[("gcp", "a3-highgpu-8g")]
    assert (a3["fabric_class"], a3["fabric_gbps_per_node"], a3["rdma"]) == ("tcpx", 1000.0, False)
    assert a3["published_benchmark_url"].startswith("https://github.com/GoogleCloudPlatform/")
    a2 = facts[("gcp", "a2-highgpu-8g")]
    assert (a2["fabric_class"], a2["rdma"], a2["gpudirect_rdma"], a2["multi_node"]) == (
        "ethernet",
        False,
        False,
        None,
    )
    h100 = facts[("azure", "Standard_ND96isr_H100_v5")]
    assert (h100["fabric_gbps_per_node"], h100["fabric_gbps_per_gpu"]) == (3200.0, 400.0)
    assert h100["source_date"] == "2024-04-18" and h100["source_grade"] == "provider"
    gb200 = facts[("azure", "Standard_ND128isr_NDR_GB200_v6")]
    # "4x 400 Gb/s ... per VM": a per-node figure only
    assert (gb200["fabric_gbps_per_node"], gb200["fabric_gbps_per_gpu"]) == (1600.0, None)


def test_other_values_as_entered():
    facts = facts_by_key()
    b200 = facts[("oracle", "BM.GPU.B200.8")]
    assert (b200["fabric_class"], b200["max_cluster_gpus"], b200["fabric_gbps_per_gpu"]) == (
        "roce",
        131072,
        400.0,
    )
    assert b200["fabric_gbps_per_node"] is None
    nebius = facts[("nebius", "gpu-h100-sxm_8gpu-128vcpu-1600gb")]
    assert (nebius["fabric_class"], nebius["multi_node"], nebius["source_grade"]) == (
        "infiniband",
        True,
        "provider",
    )
    assert nebius["fabric_gbps_per_node"] is None  # not stated by the cited page
    runpod = facts[("runpod", "Instant Clusters (A100)")]
    assert (runpod["fabric_class"], runpod["fabric_gbps_per_node"], runpod["multi_node"]) == (
        "unknown",
        1600.0,
        True,
    )
    vast = facts[("vast_ai", "Marketplace instances")]
    assert (vast["rdma"], vast["multi_node"], vast["source_date"]) == (False, None, "2025-08-14")
    lambda_1cc = facts[("lambda", "1-Click Clusters")]
    # Lambda's docs read in a personal mirror: third party, however good the text
    assert lambda_1cc["source_grade"] == "third_party"
    assert (lambda_1cc["fabric_class"], lambda_1cc["max_cluster_gpus"]) == ("infiniband", 512)


def test_a_file_that_is_not_the_facts_csv_fails_the_run():
    html = FIXTURES / "lambda_cloud" / "lambda_pricing-page_20260109.html"
    parsed = parse_local(html)
    assert parsed["status"] == "failed" and parsed["fabric_facts"] == []
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1


def test_oci_grace_blackwell_rows_state_their_scale_out_fabric():
    """OCI's own GPU quick starts name the scale-out fabric per GB shape: InfiniBand on
    BM.GPU.GB200.4, RoCE NICs on BM.GPU.GB300.4 (the GPU memory fabric page says only 'RoCE or
    InfiniBand')."""
    facts = facts_by_key()
    gb200 = facts[("oracle", "BM.GPU.GB200.4")]
    assert (gb200["fabric_class"], gb200["fabric_gbps_per_node"], gb200["multi_node"]) == (
        "infiniband",
        1600.0,
        True,
    )
    assert "InfiniBand, 4 x 400 Gbps RDMA" in gb200["evidence"]
    gb300 = facts[("oracle", "BM.GPU.GB300.4")]
    assert (gb300["fabric_class"], gb300["fabric_gbps_per_node"], gb300["rdma"]) == (
        "roce",
        3200.0,
        True,
    )
    assert "RDMA (ROCe) NICs" in gb300["evidence"] and "| 8 x 400 Gbps |" in gb300["evidence"]
    for fact in (gb200, gb300):
        assert fact["source_grade"] == "provider" and fact["source_date"] == "2026-04-10"
        assert fact["source_url"].startswith(
            "https://github.com/oracle-quickstart/oci-gpu-quickstarts/blob/2a523ef9"
        )
        # "4 x 400" / "8 x 400" are per node: no per-GPU figure is derived
        assert fact["fabric_gbps_per_gpu"] is None


def test_rows_that_state_no_fabric_class_stay_unknown():
    """Hyperstack's SR-IOV network optimized flavors (a bandwidth, no link layer named) keep
    the class unknown: nothing is inferred from what the page leaves out."""
    facts = facts_by_key()
    hyperstack = facts[("hyperstack", "Network optimized flavors")]
    assert (hyperstack["fabric_class"], hyperstack["fabric_gbps_per_node"]) == ("unknown", 350.0)
    assert hyperstack["rdma"] is None and hyperstack["source_grade"] == "provider"


def test_lambda_on_demand_is_tcp_between_instances_on_lambdas_own_page():
    """Lambda's own docs give the bandwidth between on-demand instances over their IP
    addresses, region by region (iPerf3, a TCP tool), and no InfiniBand: plain Ethernet,
    bandwidth unknown per offer because it depends on the region."""
    lambda_od = facts_by_key()[("lambda", "On-Demand Cloud instances")]
    assert (lambda_od["fabric_class"], lambda_od["source_grade"]) == ("ethernet", "provider")
    assert lambda_od["source_url"].startswith("https://github.com/LambdaLabs/docsy-lambda-docs/")
    assert lambda_od["source_date"] == "2023-11-14"
    assert "can be up to 200 Gbps" in lambda_od["evidence"]
    assert "up to 3.7 Gbps" in lambda_od["evidence"]
    assert "don't use InfiniBand fabric" in lambda_od["evidence"]
    # 'no InfiniBand' is not 'single-node only': multi_node stays unstated; so is the Gb/s
    assert lambda_od["multi_node"] is None and lambda_od["fabric_gbps_per_node"] is None


def test_new_product_line_rows_name_real_offers():
    lines = {(r["provider"], r["instance_type"]): r["product_line"] for r in product_lines()}
    reseller = catalog_instance_types("skypilot_primeintellect")
    expected = {
        "skypilot_lambda": (
            "lambda",
            """gpu_8x_h100_sxm5 gpu_8x_b200_sxm6 gpu_8x_a100_80gb_sxm4 gpu_8x_a100 gpu_8x_v100
            gpu_8x_v100_n""",
            "On-Demand Cloud instances",
        ),
        "skypilot_hyperstack": (
            "hyperstack",
            "n3-H100-SXM5x8 n3-H100x8 n3-H100x8-NVLink n3-A100x8-NVLink",
            "Network optimized flavors",
        ),
        "skypilot_gcp": ("gcp", "a3-edgegpu-8g-nolssd a3-ultragpu-8g-nolssd", None),
        "skypilot_oci": ("oracle", "BM.GPU.MI355X.8", "OCI cluster network (RoCE)"),
    }
    for source, (provider, instance_types, line) in expected.items():
        names = catalog_instance_types(source)
        for instance_type in instance_types.split():
            assert instance_type in names, f"{source}/{instance_type}"
            assert (provider, instance_type) in lines, f"{provider}/{instance_type}"
            if line:
                assert lines[(provider, instance_type)] == line
    # a -nolssd machine type is the same machine type with no bundled Local SSD
    assert lines[("gcp", "a3-edgegpu-8g-nolssd")] == "a3-edgegpu-8g"
    assert lines[("gcp", "a3-ultragpu-8g-nolssd")] == "a3-ultragpu-8g"
    for _provider, instance_type in lines:
        if instance_type.startswith(("lambdalabs__", "hyperstack__")):
            assert instance_type in reseller, instance_type
    # a flavor Hyperstack marks as not network optimized is kept out of the optimized line
    for flavor in ("n3-A100x8", "n3-L40x8", "n3-RTX-A6000x8", "n3-RTX-A4000x8"):
        assert lines[("hyperstack", flavor)] == "Standard (not network optimized) flavors"
