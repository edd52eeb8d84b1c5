from __future__ import annotations

import math
from datetime import datetime

import pytest
from pydantic import ValidationError

from fabricscope.warehouse.models import FabricClass, FabricFact, PricingTier, utc_now
from tests.helpers import make_offer


def offer(**changes):
    fields = dict(
        provider="lambda",
        source="lambda_cloud",
        instance_type="gpu_8x_h100_sxm5",
        source_url="https://lambda.ai/pricing",
    )
    fields.update(changes)
    return make_offer(2.99, **fields)


def fact(**changes):
    fields = dict(
        provider="voltage_park",
        source="voltage_park",
        instance_type="h100-ib",
        fabric_class="infiniband",
        fabric_gbps_per_node=3200,
        rdma=True,
        gpudirect_rdma=True,
        multi_node=True,
        source_url="https://www.voltagepark.com/pricing",
        evidence="3200 Gbps InfiniBand",
        obtained_by="scraped",
        source_grade="provider",
        observed_at=utc_now(),
    )
    fields.update(changes)
    return FabricFact(**fields)


def test_a_valid_offer_keeps_its_fields():
    o = offer()
    assert o.pricing_tier is PricingTier.ON_DEMAND
    assert o.key == ("lambda", "gpu_8x_h100_sxm5", None, "on_demand")


@pytest.mark.parametrize("price", [0.0, -1.0, math.nan, math.inf])
def test_prices_must_be_positive_and_finite(price):
    with pytest.raises(ValidationError):
        offer(price=price)
    with pytest.raises(ValidationError):
        offer(price_usd_per_hour=price)


def test_per_gpu_price_must_match_the_total_and_the_error_names_the_offer():
    with pytest.raises(ValidationError, match=r"gpu_8x_h100_sxm5.*lambda.*price_usd_per_gpu_hour"):
        offer(price_usd_per_gpu_hour=3.50)


@pytest.mark.parametrize(
    "changes",
    [
        {"pricing_tier": "weekly"},
        {"price_basis": "per_rack"},
        {"gpu_count": 0},
        {"currency": "usd"},
        {"observed_at": datetime(2026, 1, 1)},  # naive: when exactly?
        {"provider": "Lambda Labs"},
        {"instance_type": "   "},
        {"source_url": "not a url"},
        {"obtained_by": "guessed"},
        {"surprise": 1},  # extra fields are refused
    ],
)
def test_bad_offers_are_refused(changes):
    with pytest.raises(ValidationError):
        offer(**changes)


def test_unknown_gpu_model_stays_none():
    assert offer(gpu_model=None).gpu_model is None


def test_offers_are_frozen():
    with pytest.raises(ValidationError):
        offer().price = 1.0  # type: ignore[misc]


def test_fabric_fact_rules():
    assert fact().fabric_class is FabricClass.INFINIBAND
    with pytest.raises(ValidationError, match="cannot be multi_node"):
        fact(fabric_class="none", multi_node=True)
    with pytest.raises(ValidationError, match="gpudirect_rdma requires rdma"):
        fact(rdma=False, gpudirect_rdma=True)
    with pytest.raises(ValidationError):
        fact(evidence="")
    with pytest.raises(ValidationError):
        fact(fabric_gbps_per_node=0)
    unknown = fact(
        fabric_class="unknown",
        rdma=None,
        gpudirect_rdma=None,
        multi_node=None,
        fabric_gbps_per_node=None,
    )
    assert unknown.rdma is None and unknown.fabric_gbps_per_node is None
