"""CoreWeave's docs pages: the fabric sentences found, with their exact quotes."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

INTERCONNECT = "coreweave_hpc-interconnect.txt"
GB200 = "coreweave_gb200-instances.txt"
INTERCONNECT_URL = (
    "https://docs.coreweave.com/products/networking/hpc-interconnect/about-hpc-interconnect"
)

INFINIBAND_QUOTE = (
    "GPUDirect RDMA over InfiniBand provides low-latency, high-reliability communication for GPUs "
    "to exchange information in traditional HPC environments. CoreWeave has partnered with NVIDIA "
    "to design CoreWeave’s InfiniBand interconnected clusters using NVIDIA Quantum-2 and "
    "Quantum-X800 technology. These clusters use GPUDirect to let GPUs communicate directly with "
    "each other across the InfiniBand fabric, which bypasses the Node’s CPU and kernel resources."
)


def facts(fixture: str, url: str | None = None) -> dict[str, dict]:
    parsed = parse_fixture("coreweave_docs", fixture, url)
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["dropped"] == {}
    return {f["instance_type"]: f for f in parsed["fabric_facts"]}


def test_interconnect_page():
    found = facts(INTERCONNECT, INTERCONNECT_URL)
    assert set(found) == {
        "HGX H100 (InfiniBand node pools)",
        "HGX H200 (InfiniBand node pools)",
        "GB300 NVL72",
    }
    for pool in ("HGX H100 (InfiniBand node pools)", "HGX H200 (InfiniBand node pools)"):
        ib = found[pool]
        assert ib["evidence"] == INFINIBAND_QUOTE
        assert (ib["provider"], ib["fabric_class"], ib["obtained_by"]) == (
            "coreweave",
            "infiniband",
            "scraped",
        )
        assert ib["fabric_product"] == "NVIDIA Quantum-2 and Quantum-X800 InfiniBand"
        assert (ib["rdma"], ib["gpudirect_rdma"], ib["multi_node"]) == (True, True, True)
        assert ib["source_url"] == INTERCONNECT_URL
        # no bandwidth, size or topology on this part of the page
        assert ib["fabric_gbps_per_node"] is None and ib["fabric_gbps_per_gpu"] is None
        assert ib["topology"] is None and ib["max_cluster_gpus"] is None
    gb300 = found["GB300 NVL72"]
    assert gb300["fabric_class"] == "spectrum_x"
    assert gb300["evidence"] == (
        "RDMA over Converged Ethernet (RoCE) through the NVIDIA Spectrum-X platform provides an "
        "Ethernet-native fabric designed for AI. Available on GB300-powered instances, Spectrum-X "
        "delivers high-performance RDMA using ConnectX-8 SuperNICs and BlueField-3 DPUs. It "
        "provides InfiniBand-like performance, including performance isolation and congestion "
        "control, within a standard Ethernet ecosystem. The following sections describe the "
        "underlying technologies that both fabrics rely on.About GPUDirect RDMA"
    )
    assert (gb300["rdma"], gb300["gpudirect_rdma"], gb300["multi_node"]) == (True, True, None)


def test_gb200_page():
    found = facts(GB200, "https://docs.coreweave.com/docs/platform/instances/gb200")
    assert list(found) == ["gb200-4x"]
    gb200 = found["gb200-4x"]
    assert gb200["evidence"] == (
        "To ensure optimal performance, GB200 NVL72-powered instances must be deployed as full "
        "racks of 18 Nodes. When deploying larger Node Pools, targetNodes must be a multiple of "
        "18, such as 36 or 54."
    )
    # the page says nodes come 18 at a time, not which network joins them
    assert (gb200["fabric_class"], gb200["multi_node"]) == ("unknown", True)
    assert gb200["rdma"] is None and gb200["fabric_product"] is None


def test_another_providers_page_fails_the_run():
    parsed = parse_fixture("coreweave_docs", "../azure_docs/azure_nd-mi300x-v5-series.txt")
    assert parsed["status"] == "failed" and parsed["fabric_facts"] == []
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
