"""Azure ND H100 v5 and ND MI300X v5 InfiniBand, from the two pages' exact sentences."""

from __future__ import annotations

from tests.scrapers.harness import parse_fixture

H100_URL = "https://glennklockwood.com/garden/nodes/azure-nd-h100-v5"
MI300X_URL = (
    "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/"
    "gpu-accelerated/nd-mi300x-v5-series.md"
)


def only_fact(fixture: str, url: str) -> dict:
    parsed = parse_fixture("azure_docs", fixture, url)
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["dropped"] == {} and len(parsed["fabric_facts"]) == 1
    # the other page's sentence is not on this one: counted, not guessed
    assert parsed["stats"]["fabricscope/docs_sentence_missing"] == 1
    return parsed["fabric_facts"][0]


def test_nd_h100_v5_node_page():
    fact = only_fact("azure_nd-h100-v5-node.txt", H100_URL)
    assert (fact["provider"], fact["instance_type"], fact["source_url"]) == (
        "azure",
        "Standard_ND96isr_H100_v5",
        H100_URL,
    )
    assert fact["evidence"] == (
        "Each VM has1 • 96 Intel Xeon (Sapphire Rapids) cores (physically two 56-core sockets) "
        "• 1,900 GiB DDR5 • 28,000 GiB of local storage (physically 8x NVMe drives) • 1x 80G "
        "Ethernet NIC (physically 100G Azure SmartNIC) • 8x 400G ConnectX-7 NDR InfiniBand HCAs"
    )
    assert (fact["fabric_class"], fact["fabric_gbps_per_node"]) == ("infiniband", 3200.0)
    assert fact["fabric_product"] == "8x 400G ConnectX-7 NDR InfiniBand HCAs"
    # not on the page: per GPU, RDMA, cluster size
    assert fact["fabric_gbps_per_gpu"] is None and fact["rdma"] is None
    assert fact["gpudirect_rdma"] is None and fact["max_cluster_gpus"] is None


def test_nd_mi300x_v5_series_page():
    fact = only_fact("azure_nd-mi300x-v5-series.txt", MI300X_URL)
    assert fact["instance_type"] == "Standard_ND96isr_MI300X_v5"
    assert fact["evidence"] == "Infiniband: Supported, GPUDirect RDMA, 8x400 Gigabit NDR"
    assert (fact["fabric_class"], fact["fabric_gbps_per_node"]) == ("infiniband", 3200.0)
    assert (fact["rdma"], fact["gpudirect_rdma"], fact["multi_node"]) == (True, True, None)
    assert fact["fabric_gbps_per_gpu"] is None and fact["obtained_by"] == "scraped"


def test_another_providers_page_fails_the_run():
    parsed = parse_fixture("azure_docs", "../coreweave_docs/coreweave_hpc-interconnect.txt")
    assert parsed["status"] == "failed" and parsed["fabric_facts"] == []
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1
