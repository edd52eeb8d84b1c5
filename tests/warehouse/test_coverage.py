"""What the ranking stands on, measured by one query (data_coverage) on the offline build."""

from __future__ import annotations

import pandas as pd

from fabricscope.ops.status import coverage
from fabricscope.warehouse.db import read_frame

# Issue 13's targets, met on this offline build: 30 providers with offers; 90% of the offers
# that could form a cluster with a fabric class (data_coverage's count, 8+ GPUs or stated
# multi-node: 1,183 of 1,305; of the offers with 8+ GPUs alone it is 1,078 of 1,200, 89.8%);
# and 90% of offers with an identified GPU (4,456 of 4,822: 92.4%). The 366 left are counted by
# reason in the normaliser's stats: OCI's BM.GPU2.2, VM.GPU3.1 and VM.GPU3.4 (220 offers, no
# Oracle statement or measurement names the part) and resellers' bare H100 / H200 names.
MIN_PROVIDERS = 30
TARGET_SHARE = 0.90


def test_coverage_holds_its_floors(fixture_warehouse):
    figures = coverage(fixture_warehouse).figures
    assert figures["providers_with_offers"] >= MIN_PROVIDERS, figures
    assert figures["share_gpu_identified"] >= TARGET_SHARE, figures  # 4,456 of 4,822
    assert figures["share_cluster_offers_with_fabric"] >= TARGET_SHARE, figures  # 1,183 of 1,305


def test_coverage_is_what_the_catalog_says(fixture_warehouse):
    covered = coverage(fixture_warehouse)
    _, catalog = read_frame(fixture_warehouse, "select * from instance_catalog")
    cluster = catalog[(catalog["gpu_count"] >= 8) | (catalog["multi_node"] == True)]  # noqa: E712
    assert covered.figures["offers"] == len(catalog)
    assert covered.figures["cluster_offers"] == len(cluster)
    assert covered.figures["cluster_offers_with_fabric"] == cluster["fabric_class"].notna().sum()
    # every cluster-capable offer without a class is listed, with why
    assert covered.gaps["offers"].sum() == cluster["fabric_class"].isna().sum()
    assert covered.gaps["why"].notna().all()


def test_hyperscaler_offers_link_to_their_own_fabric(fixture_warehouse):
    _, catalog = read_frame(
        fixture_warehouse,
        "select provider, instance_type, gpu_name, fabric_class, fabric_gbps_per_node, "
        "fabric_source_grade from instance_catalog",
    )
    p5 = catalog[(catalog["provider"] == "aws") & (catalog["instance_type"] == "p5.48xlarge")]
    assert len(p5) and (p5["fabric_class"] == "efa").all()
    assert (p5["fabric_gbps_per_node"] == 3200).all()
    assert (p5["fabric_source_grade"] == "provider").all()
    # CoreWeave's PCIe instances are not its HGX InfiniBand pools
    pcie = catalog[
        (catalog["provider"] == "coreweave") & catalog["gpu_name"].str.contains("PCIe", na=False)
    ]
    assert len(pcie) and (pcie["fabric_class"] != "infiniband").all()


def test_sourced_facts_reach_the_offers_they_name(fixture_warehouse):
    """The facts and links added for the coverage target land where their sources say."""
    _, catalog = read_frame(
        fixture_warehouse,
        "select provider, instance_type, gpu_model, fabric_class, fabric_gbps_per_node, "
        "multi_node, fabric_source_grade from instance_catalog",
    )
    rows = catalog.groupby(["provider", "instance_type"]).first()
    # Lambda on-demand: Ethernet between instances, on Lambda's own docs; the Shadeform resale
    # of its 8x A100 (only on-demand: 1-Click Clusters are H100) reaches the same fact
    for instance_type in ("gpu_8x_h100_sxm5", "lambdalabs_A100x8"):
        row = rows.loc[("lambda", instance_type)]
        assert (row.fabric_class, row.fabric_source_grade) == ("ethernet", "provider")
    # Lambda's V100 on-demand instance: SXM2 on Lambda's own tutorial output
    assert rows.loc[("lambda", "gpu_8x_v100"), "gpu_model"] == "V100-SXM-16GB"
    # Azure NCv3: the 'r' size is on FDR InfiniBand (56 Gb/s), the others on Ethernet
    rdma = rows.loc[("azure", "Standard_NC24rs_v3")]
    assert (rdma.fabric_class, rdma.fabric_gbps_per_node, rdma.multi_node) == (
        "infiniband",
        56.0,
        True,
    )
    assert rows.loc[("azure", "Standard_NC24s_v3"), "fabric_class"] == "ethernet"
    assert rows.loc[("azure", "Standard_NC24s_v3"), "gpu_model"] == "V100-PCIE-16GB"
    # Daytona's GPU sandboxes share no network: single-node, so never clustered
    sandbox = rows.loc[("daytona", "8x-H100")]
    assert (sandbox.fabric_class, sandbox.multi_node) == ("none", False)
    # Lium is a peer-to-peer marketplace (its own README): its 8-GPU hosts do not cluster
    lium = rows.loc[("lium", "H100-SXM_8x")]
    assert not lium.multi_node and pd.notna(lium.multi_node)
    # Oracle's V100 shape: VCN Ethernet (2 x 25 Gbps), read in a mirror: third-party
    oci = rows.loc[("oracle", "BM.GPU3.8")]
    assert (oci.fabric_class, oci.fabric_gbps_per_node, oci.fabric_source_grade) == (
        "ethernet",
        50.0,
        "third_party",
    )
    # SXM2 on Oracle Japan's own tutorial output run on BM.GPU3.8 (NCCL: 8 x V100-SXM2-16GB)
    assert oci.gpu_model == "V100-SXM-16GB"
    assert rows.loc[("oracle", "VM.GPU2.1"), "gpu_model"] == "P100-SXM-16GB"
    assert pd.isna(rows.loc[("oracle", "VM.GPU3.4"), "gpu_model"])  # nothing names its part
    # a reseller's row takes its upstream type's part: Prime Intellect's Hyperstack n3-H100x8 is
    # the PCIe card, its n3-H100-SXM5x8 the SXM board
    assert rows.loc[("hyperstack", "hyperstack__8xH100_80GB__252__1440"), "gpu_model"] == (
        "H100-PCIE-80GB"
    )
    assert rows.loc[("hyperstack", "hyperstack__8xH100_80GB__192__960"), "gpu_model"] == (
        "H100-SXM-80GB"
    )
    # Scaleway's 8x L4 instance: a 20 Gb/s instance NIC, InfiniBand only in its AI clusters
    l4 = rows.loc[("scaleway", "scaleway_L4x8")]
    assert (l4.fabric_class, l4.fabric_gbps_per_node) == ("ethernet", 20.0)
    # Shadeform's Crusoe 8x A100 SXM4 is Crusoe's InfiniBand type; Crusoe's a100-80gb.8x is PCIe
    crusoe = rows.loc[("crusoe", "crusoe_A100-80G-sxm4x8")]
    assert (crusoe.fabric_class, crusoe.fabric_gbps_per_node) == ("infiniband", 1600.0)
    pcie = rows.loc[("crusoe", "crusoecloud__8xA100_80GB__96__960")]
    assert pcie.gpu_model == "A100-PCIE-80GB" and pd.isna(pcie.fabric_class)  # class unknown
    # Spheron's dedicated instances: only its Cluster sub-type supports distributed training
    spheron = rows.loc[("spheron", "n3-H100x8__CANADA-1")]
    assert not spheron.multi_node and pd.notna(spheron.multi_node)
