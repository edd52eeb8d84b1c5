"""CoreWeave's docs: the HPC interconnect page (fabrics) and the GB200 instances page."""

from __future__ import annotations

from fabricscope.scrapers.spiders.base import DocsFabricSpider, DocsFact

# The interconnect page names no instance types: "HGX H100/H200 (InfiniBand node pools)" and
# "GB300 NVL72" are the curated file's names (fabricscope/scrapers/curated/fabric_facts.csv) for
# what it describes, so the two sources line up.
_INFINIBAND = (
    r"GPUDirect RDMA over InfiniBand provides low-latency, high-reliability communication for "
    r"GPUs[^.]*\. CoreWeave has partnered with NVIDIA to design CoreWeave['’]s InfiniBand "
    r"interconnected clusters using NVIDIA Quantum-2 and Quantum-X800 technology\. These clusters "
    r"use GPUDirect to let GPUs communicate directly with each other across the InfiniBand "
    r"fabric[^.]*\."
)
_INFINIBAND_FIELDS = {
    "fabric_class": "infiniband",
    "fabric_product": "NVIDIA Quantum-2 and Quantum-X800 InfiniBand",
    "rdma": "yes",
    "gpudirect_rdma": "yes",
    "multi_node": "yes",  # "InfiniBand interconnected clusters"
}


class CoreweaveDocsSpider(DocsFabricSpider):
    name = "coreweave_docs"
    start_urls = [
        "https://docs.coreweave.com/products/networking/hpc-interconnect/about-hpc-interconnect",
        "https://docs.coreweave.com/docs/platform/instances/gb200",
    ]
    refresh_cron = "41 3 * * *"
    item_attributes = {
        "provider": "coreweave",
        "obtained_by": "scraped",
        "source_grade": "provider",
    }
    facts = (
        DocsFact("HGX H100 (InfiniBand node pools)", _INFINIBAND, _INFINIBAND_FIELDS),
        DocsFact("HGX H200 (InfiniBand node pools)", _INFINIBAND, _INFINIBAND_FIELDS),
        DocsFact(
            "GB300 NVL72",
            r"RDMA over Converged Ethernet \(RoCE\) through the NVIDIA Spectrum-X platform "
            r"provides an Ethernet-native fabric designed for AI\. Available on GB300-powered "
            r"instances, Spectrum-X delivers high-performance RDMA using ConnectX-8 SuperNICs and "
            r"BlueField-3 DPUs\.[^.]*\. The following sections describe the underlying "
            r"technologies that both fabrics rely on\.\s*About GPUDirect RDMA",
            {
                "fabric_class": "spectrum_x",
                "fabric_product": "NVIDIA Spectrum-X RoCE, ConnectX-8 SuperNICs, BlueField-3 DPUs",
                "rdma": "yes",
                "gpudirect_rdma": "yes",  # what "both fabrics rely on"
            },
        ),
        DocsFact(
            "gb200-4x",  # the page's own instanceType
            r"To ensure optimal performance, GB200 NVL72-powered instances must be deployed as "
            r"full racks of 18 Nodes\. When deploying larger Node Pools, targetNodes must be a "
            r"multiple of 18, such as 36 or 54\.",
            # the page names no scale-out fabric: only that nodes come 18 at a time
            {"fabric_class": "unknown", "multi_node": "yes"},
        ),
    )
