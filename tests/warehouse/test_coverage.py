"""What the ranking stands on, measured by one query (data_coverage) on the offline build."""

from __future__ import annotations

from pipeline.status import coverage
from warehouse.db import read_frame

# Issue 13's targets: 30 providers with offers (met), 90% of offers with an identified GPU
# and 90% of cluster-capable offers with a fabric class (NOT met: what remains is unstated by
# any source read, each listed with why in fabric_coverage_gaps and the normaliser's stats).
# The shares below are the floors this offline build reaches, held so they cannot slip back
# unnoticed; raise them as sources are added, up to the targets.
MIN_PROVIDERS = 30
TARGET_SHARE = 0.90  # not yet: see above
FLOOR_SHARE_GPU_IDENTIFIED = 0.84  # 4,064 of 4,823 offers
FLOOR_SHARE_CLUSTER_OFFERS_WITH_FABRIC = 0.76  # 988 of 1,292 offers


def test_coverage_holds_its_floors(fixture_warehouse):
    figures = coverage(fixture_warehouse).figures
    assert figures["providers_with_offers"] >= MIN_PROVIDERS, figures
    assert figures["share_gpu_identified"] >= FLOOR_SHARE_GPU_IDENTIFIED, figures
    assert figures["share_cluster_offers_with_fabric"] >= FLOOR_SHARE_CLUSTER_OFFERS_WITH_FABRIC, (
        figures
    )


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
