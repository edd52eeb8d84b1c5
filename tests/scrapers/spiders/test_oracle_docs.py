"""OCI's OSU/NCCL benchmark post: the one sentence read, and nothing more claimed."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

URL = (
    "https://blogs.oracle.com/cloud-infrastructure/zettascale-osu-nccl-benchmark-h100-ai-workloads"
)


def test_benchmark_post():
    parsed = parse_fixture("oracle_docs", "oracle_rdma-nccl-benchmark.txt", URL)
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["dropped"] == {}
    [fact] = parsed["fabric_facts"]
    assert (fact["provider"], fact["instance_type"], fact["source_url"]) == (
        "oracle",
        "BM.GPU.H100.8",
        URL,
    )
    assert fact["evidence"] == (
        "This blog will explain: - why non-blocking, lossless RDMA networks are essential for "
        "scalable AI workloads. - The benchmark result of OCI’s AI infrastructure with OSU and "
        "NCCL tools."
    )
    # the excerpt names no fabric class, bandwidth or RDMA product for OCI: all stay unknown
    assert fact["fabric_class"] == "unknown"
    for field in ("fabric_product", "fabric_gbps_per_node", "fabric_gbps_per_gpu", "rdma"):
        assert fact[field] is None, field
    # but the post is a published multi-node benchmark, which buyers ask for
    assert fact["published_benchmark_url"] == URL


def test_another_providers_page_fails_the_run():
    parsed = parse_fixture("oracle_docs", "../coreweave_docs/coreweave_hpc-interconnect.txt")
    assert parsed["status"] == "failed" and parsed["fabric_facts"] == []
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
