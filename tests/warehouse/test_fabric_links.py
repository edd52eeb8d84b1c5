"""How an offer finds its fabric: its own instance type, or its provider's agreed GPU family."""

from __future__ import annotations

from tests.helpers import run_record
from warehouse.db import read_frame
from warehouse.load import RunBatch, fabric_table, offers_table, publish_run
from warehouse.models import FabricFact, Offer, utc_now

NOW = utc_now()


def offer(provider, instance_type, gpu_name, gpu_model=None, count=8):
    return Offer(
        provider=provider,
        source=f"{provider}_page",
        instance_type=instance_type,
        gpu_name=gpu_name,
        gpu_model=gpu_model,
        gpu_count=count,
        pricing_tier="on_demand",
        price_basis="per_instance",
        price=8.0 * count,
        currency="USD",
        price_usd_per_hour=8.0 * count,
        price_usd_per_gpu_hour=8.0,
        source_url="https://example.invalid/prices",
        obtained_by="scraped",
        observed_at=NOW,
    )


def fact(provider, instance_type, fabric_class, gpu_name=None):
    return FabricFact(
        provider=provider,
        source="curated_fabric",
        instance_type=instance_type,
        gpu_name=gpu_name,
        fabric_class=fabric_class,
        source_url="https://example.invalid/docs",
        evidence=f"{instance_type}: {fabric_class}",
        obtained_by="curated",
        observed_at=NOW,
    )


def catalog(warehouse_path, offers, facts):
    publish_run(warehouse_path, RunBatch(run_record("offers_page"), offers_table(offers)))
    publish_run(warehouse_path, RunBatch(run_record("curated_fabric"), None, fabric_table(facts)))
    rows = read_frame(
        warehouse_path,
        "select provider, instance_type, fabric_class, fabric_match from instance_catalog",
    )[1].astype(object)
    rows = rows.where(rows.notna(), None)
    return {
        (r.provider, r.instance_type): (r.fabric_class, r.fabric_match) for r in rows.itertuples()
    }


def test_fabric_links(warehouse_path):
    offers = [
        offer("alpha", "8x H100 IB", "H100 SXM", "H100-SXM-80GB"),
        offer("alpha", "8x H100 eth", "H100 SXM", "H100-SXM-80GB"),
        offer("beta", "gpu-h100-8", "H100"),  # bare name: the family is still H100
        offer("beta", "gpu-a10-1", "A10", "A10-PCIE-24GB", count=1),  # A10 is not A100
        offer("gamma", "8x H100", "H100 SXM", "H100-SXM-80GB"),
        offer("delta", "8x H200", "H200 SXM", "H200-SXM-141GB"),
        offer("epsilon", "8x B200", "B200", "B200-SXM-180GB"),
    ]
    facts = [
        fact("alpha", "8x H100 IB", "infiniband"),  # exact instance types
        fact("alpha", "8x H100 eth", "ethernet"),
        fact("beta", "HGX H100 / A100 (InfiniBand node pools)", "infiniband", "H100 / A100"),
        fact("gamma", "H100 clusters", "infiniband", "H100"),
        fact("gamma", "H100 on-demand", "unknown", "H100"),  # one fact in doubt
        fact("delta", "H200 (fabric A)", "infiniband", "H200"),
        fact("delta", "H200 (fabric B)", "roce", "H200"),  # facts disagree
    ]
    links = catalog(warehouse_path, offers, facts)
    assert links[("alpha", "8x H100 IB")] == ("infiniband", "instance_type")
    assert links[("alpha", "8x H100 eth")] == ("ethernet", "instance_type")
    assert links[("beta", "gpu-h100-8")] == ("infiniband", "provider_gpu_family")
    assert links[("beta", "gpu-a10-1")] == (None, None)
    assert links[("gamma", "8x H100")] == (None, None)
    assert links[("delta", "8x H200")] == (None, None)
    assert links[("epsilon", "8x B200")] == (None, None)
    assert len(links) == len(offers)
