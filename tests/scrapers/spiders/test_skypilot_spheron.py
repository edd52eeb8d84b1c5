"""Spheron in SkyPilot's catalog (values read off the CSV fixture)."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import offers_by_type, parse_fixture

CATALOG = "skypilot-catalog_v8_spheron_vms.csv"


def test_on_demand_and_spot_offers():
    parsed = parse_fixture("skypilot_spheron", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # 152 rows: 151 with a Price, 5 with a SpotPrice (4 of them have both)
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 151, "spot": 5}
    assert {o["provider"] for o in parsed["offers"]} == {"spheron"}
    by_type = offers_by_type(parsed)
    h100 = by_type[("1H100.80S.32V_FIN-03_500", "on_demand")]
    assert (h100["region"], h100["price_usd_per_hour"], h100["gpu_memory_gb"]) == (
        "Finland 3",
        2.9124,
        80,
    )
    assert by_type[("1H100.80S.32V_FIN-03_500", "spot")]["price_usd_per_hour"] == 0.8015
    # empty Price, a SpotPrice: a spot offer of that instance type only
    assert ("n3-A100x1-spot__CANADA-1", "on_demand") not in by_type
    assert by_type[("n3-A100x1-spot__CANADA-1", "spot")]["price_usd_per_hour"] == 1.1476
    assert by_type[("n3-A100x1__CANADA-1", "on_demand")]["price_usd_per_hour"] == 1.4327


def test_names_carry_the_form_factor_as_published():
    by_type = offers_by_type(parse_fixture("skypilot_spheron", CATALOG))
    a100 = by_type[("A100_sxm4_80G_668d6762247d03149a4c947b_desmoines-usa-1", "on_demand")]
    assert (a100["gpu_name"], a100["gpu_count"], a100["gpu_memory_gb"]) == ("A100_80G_SXM4", 1, 80)
    a16 = by_type[("A16x16_668d6762247d03149a4c946b_singapore-singapore-1", "on_demand")]
    assert (a16["gpu_name"], a16["gpu_count"], a16["gpu_memory_gb"]) == ("A16_PCIE", 16, 16)
    assert a16["price_usd_per_hour"] == 12.1308
