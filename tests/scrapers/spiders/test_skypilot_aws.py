"""AWS in SkyPilot's catalog: zones collapsed per region (values read off the CSV fixture)."""

from __future__ import annotations

from collections import Counter

from tests.scrapers.harness import fixture_rows, offer_at, parse_fixture

CATALOG = "skypilot-catalog_v8_aws_vms_gpu.csv"


def catalog_rows() -> list[dict[str, str]]:
    return fixture_rows("skypilot_aws", CATALOG)


offer = offer_at


def test_one_offer_per_type_region_and_tier():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 621, "spot": 619}
    keys = [(o["instance_type"], o["region"], o["pricing_tier"]) for o in parsed["offers"]]
    assert len(keys) == len(set(keys))
    assert {o["provider"] for o in parsed["offers"]} == {"aws"}


def test_zones_are_counted_and_the_cheapest_zone_wins():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    # g4dn.xlarge in us-east-1: 5 zones (use1-az1, az2, az4, az5, az6), on demand 0.526 in
    # each; spot 0.219 / 0.2132 / 0.2131 / 0.2069 / 0.2118: the cheapest zone's
    on_demand = offer(parsed, "g4dn.xlarge", "us-east-1", "on_demand")
    spot = offer(parsed, "g4dn.xlarge", "us-east-1", "spot")
    assert (on_demand["zones"], on_demand["price_usd_per_hour"]) == (5, 0.526)
    assert (spot["zones"], spot["price_usd_per_hour"]) == (5, 0.2069)
    # p5.48xlarge in us-east-1: 6 zones, spot from 55.04 (= on demand) down to 14.246
    p5 = offer(parsed, "p5.48xlarge", "us-east-1", "spot")
    assert (p5["zones"], p5["price_usd_per_hour"], p5["price_usd_per_gpu_hour"]) == (
        6,
        14.246,
        1.78075,
    )
    assert (p5["gpu_count"], p5["gpu_memory_gb"], p5["vcpus"], p5["ram_gb"]) == (8, 80, 192, 2048)
    # on-demand prices are regional (never differ by zone); spot differs in 563 offers
    assert parsed["stats"]["fabricscope/zones/price_differs"] == 563
    assert parsed["stats"]["fabricscope/zones/price_differs/spot"] == 563
    assert "fabricscope/zones/price_differs/on_demand" not in parsed["stats"]


def test_zones_match_the_rows_of_the_catalog():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    rows = catalog_rows()
    for o in parsed["offers"]:
        column = "Price" if o["pricing_tier"] == "on_demand" else "SpotPrice"
        zoned = [
            r
            for r in rows
            if (r["InstanceType"], r["Region"]) == (o["instance_type"], o["region"])
            and r[column].strip()
        ]
        assert o["zones"] == len({r["AvailabilityZone"] for r in zoned})
        assert o["price"] == min(float(r[column]) for r in zoned)


def test_accelerators_that_are_no_gpus_and_gpu_slices_are_skipped_and_counted():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    families = {o["instance_type"].split(".")[0] for o in parsed["offers"]}
    not_gpus = {"inf1", "inf2", "trn1", "trn1n", "dl1", "dl2q", "f1", "f2"}
    assert not families & (not_gpus | {"g6f", "gr6f"})
    rows = catalog_rows()
    skipped = Counter(
        r["AcceleratorName"] for r in rows if r["InstanceType"].split(".")[0] in not_gpus
    )
    # every row of theirs is counted, under its AcceleratorName
    assert skipped == {
        "Inferentia": 201,
        "Inferentia2": 118,
        "Trainium": 17,
        "Virtex UltraScale (VU9P)": 44,
        "Virtex UltraScale+ (VU47P)": 29,
        "Gaudi HL-205": 2,
        "Qualcomm AI100": 2,
    }
    for name, count in skipped.items():
        assert parsed["stats"][f"fabricscope/skipped/not_a_gpu/{name}"] == count
    # g6f/gr6f: AcceleratorCount 0.125-0.5 of an L4 on 125 rows
    slices = [r for r in rows if r["InstanceType"].split(".")[0] in {"g6f", "gr6f"}]
    assert {r["AcceleratorCount"] for r in slices} == {"0.125", "0.25", "0.5"}
    assert parsed["stats"]["fabricscope/skipped/fractional_gpu"] == len(slices) == 125


def test_p5e_has_no_on_demand_price_only_spot():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    p5e = [o for o in parsed["offers"] if o["instance_type"] == "p5e.48xlarge"]
    assert {o["pricing_tier"] for o in p5e} == {"spot"}
    assert {o["region"] for o in p5e} == {"ap-southeast-3", "us-east-2", "us-west-2"}
    # us-east-2: spot 20.3242 (use2-az1) and 17.4812 (use2-az3); use2-az2 has neither price
    east = offer(parsed, "p5e.48xlarge", "us-east-2", "spot")
    assert (east["zones"], east["price_usd_per_hour"], east["gpu_name"]) == (2, 17.4812, "H200")
    assert east["gpu_memory_gb"] == 141  # 144384 MiB
    assert parsed["stats"]["fabricscope/skipped/no_price"] == 4  # the 4 p5e rows with neither


def test_aws_gpu_names_and_memory_per_gpu_in_mib():
    parsed = parse_fixture("skypilot_aws", CATALOG)
    p4de = offer(parsed, "p4de.24xlarge", "us-east-1", "on_demand")
    assert (p4de["gpu_name"], p4de["gpu_memory_gb"], p4de["zones"]) == ("A100-80GB", 80, 2)
    assert p4de["price_usd_per_hour"] == 27.44705
    p3dn = offer(parsed, "p3dn.24xlarge", "us-east-1", "on_demand")
    assert (p3dn["gpu_name"], p3dn["gpu_memory_gb"], p3dn["price_usd_per_hour"]) == (
        "V100-32GB",
        32,
        31.212,
    )
    g4dn = offer(parsed, "g4dn.xlarge", "us-east-1", "on_demand")
    assert (g4dn["gpu_model"], g4dn["gpu_memory_gb"]) == ("T4-PCIE-16GB", 16)


def test_a_catalog_without_its_zone_column_fails_the_run():
    # Azure's v6 file has every column but AvailabilityZone
    parsed = parse_fixture(
        "skypilot_aws", "../skypilot_azure/skypilot-catalog_v6_azure_vms_gpu.csv"
    )
    assert parsed["status"] == "failed"
    assert parsed["stats"]["fabricscope/layout_unknown"] == 1


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_aws", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
