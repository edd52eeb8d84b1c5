"""Google Cloud in SkyPilot's catalog: host row + accelerator row per zone, per region."""

from __future__ import annotations

from collections import Counter

from fabricscope.scrapers.spiders.skypilot_gcp import SkypilotGcpSpider, machine_gpus
from tests.scrapers.harness import fixture_rows, offer_at, parse_fixture

CATALOG = "skypilot-catalog_v8_gcp_vms_gpu_and_hosts.csv"


def catalog_rows() -> list[dict[str, str]]:
    return fixture_rows("skypilot_gcp", CATALOG)


offer = offer_at


def test_a_vm_costs_its_host_row_plus_its_accelerator_row():
    parsed = parse_fixture("skypilot_gcp", CATALOG)
    assert parsed["status"] == "ok" and parsed["dropped"] == {}
    # us-central1-a (and -b, -c, -f alike): a2-highgpu-1g host 0.73948 / spot 0.36975,
    # A100 x1 accelerator 2.93391 / spot 1.4341
    a2 = offer(parsed, "a2-highgpu-1g", "us-central1", "on_demand")
    assert (a2["price_usd_per_hour"], a2["zones"]) == (3.67339, 4)
    assert offer(parsed, "a2-highgpu-1g", "us-central1", "spot")["price_usd_per_hour"] == 1.80385
    assert (a2["gpu_name"], a2["gpu_count"], a2["gpu_memory_gb"]) == ("A100", 1, 40)
    assert (a2["vcpus"], a2["ram_gb"], a2["provider"]) == (12, 85, "gcp")  # the host row's
    # a3-megagpu-8g: host 9.46006 + 8 x H100-MEGA 82.75421; spot 2.75246 + 24.0768
    mega = offer(parsed, "a3-megagpu-8g", "us-central1", "on_demand")
    assert (mega["price_usd_per_hour"], mega["gpu_count"], mega["zones"]) == (92.21427, 8, 3)
    assert mega["gpu_name"] == "H100-MEGA"
    assert offer(parsed, "a3-megagpu-8g", "us-central1", "spot")["price"] == 26.82926
    # g2-standard-24 carries 2 L4: host 0.88075 + L4 x2 1.12008
    g2 = offer(parsed, "g2-standard-24", "us-central1", "on_demand")
    assert (g2["price_usd_per_hour"], g2["gpu_count"], g2["gpu_model"]) == (
        2.00083,
        2,
        "L4-PCIE-24GB",
    )


def test_a4_host_rows_are_free_and_its_price_is_the_b200_rows():
    parsed = parse_fixture("skypilot_gcp", CATALOG)
    hosts = [r for r in catalog_rows() if r["InstanceType"] == "a4-highgpu-8g"]
    assert {(r["Price"], r["SpotPrice"]) for r in hosts} == {("0.0", "0.0")}
    # us-central1-b: B200 x8 90.216 / spot 32.6064
    a4 = offer(parsed, "a4-highgpu-8g", "us-central1", "on_demand")
    assert (a4["price_usd_per_hour"], a4["price_usd_per_gpu_hour"], a4["zones"]) == (
        90.216,
        11.277,
        1,
    )
    assert offer(parsed, "a4-highgpu-8g", "us-central1", "spot")["price"] == 32.6064
    assert a4["gpu_model"] == "B200-SXM-180GB"


def test_no_spot_where_the_accelerator_row_has_none():
    parsed = parse_fixture("skypilot_gcp", CATALOG)
    # us-east5-a: H200 x8 36.60258 with an empty SpotPrice; host 13.81519 / 2.87232
    ultra = [o for o in parsed["offers"] if o["instance_type"] == "a3-ultragpu-8g"]
    east5 = [o for o in ultra if o["region"] == "us-east5"]
    assert [(o["pricing_tier"], o["price"]) for o in east5] == [("on_demand", 50.41777)]


def test_counts_and_what_gives_no_offer():
    parsed = parse_fixture("skypilot_gcp", CATALOG)
    assert Counter(o["pricing_tier"] for o in parsed["offers"]) == {"on_demand": 338, "spot": 334}
    rows = catalog_rows()
    accelerators = [r for r in rows if not r["InstanceType"]]
    # N1 GPUs: their host is a VM of the buyer's choice, not in the file: no offer
    n1 = [r for r in accelerators if r["AcceleratorName"] in {"T4", "V100", "P100", "P4"}]
    assert len(n1) == 278
    assert not {o["gpu_name"] for o in parsed["offers"]} & {"T4", "V100", "P100", "P4"}
    # plus 31 accelerator rows in zones without the machine type (A100 x16 in 11 zones,
    # H100 x1/2/4 in 5 each, H100-MEGA x8 in 5: e.g. asia-northeast3)
    assert parsed["stats"]["fabricscope/skipped/gcp_no_host_row"] == 278 + 11 + 15 + 5
    assert not [
        o
        for o in parsed["offers"]
        if (o["instance_type"], o["region"]) == ("a3-megagpu-8g", "asia-northeast3")
    ]
    # a3-highgpu-1g/2g/4g in europe-west8-c, a3-megagpu-8g in asia-east1-c and
    # europe-north1-c: host rows without their accelerator row
    assert parsed["stats"]["fabricscope/skipped/gcp_no_accelerator_row"] == 5
    host_types = {r["InstanceType"] for r in rows if r["InstanceType"]}
    assert {o["instance_type"] for o in parsed["offers"]} == host_types


def test_machine_types_map_to_the_accelerator_rows_of_the_file():
    rows = catalog_rows()
    accelerators = {
        (r["AcceleratorName"], int(r["AcceleratorCount"])) for r in rows if not r["InstanceType"]
    }
    host_types = {r["InstanceType"] for r in rows if r["InstanceType"]}
    assert {t: machine_gpus(t) for t in host_types if machine_gpus(t) not in accelerators} == {}
    assert machine_gpus("a3-megagpu-8g") == ("H100-MEGA", 8)
    assert machine_gpus("a2-megagpu-16g") == ("A100", 16)
    assert machine_gpus("a2-ultragpu-4g") == ("A100-80GB", 4)
    assert machine_gpus("a3-ultragpu-8g-nolssd") == ("H200", 8)
    assert machine_gpus("g2-standard-48") == ("L4", 4)
    assert machine_gpus("n1-standard-8") is None


def test_region_is_read_and_only_derived_from_the_zone_when_missing():
    rows = catalog_rows()
    # in this file every row names its region, and it is the zone without its letter
    assert all(r["Region"] == r["AvailabilityZone"].rsplit("-", 1)[0] for r in rows)
    spider = SkypilotGcpSpider()
    assert spider.region_of({"Region": "", "AvailabilityZone": "us-central1-a"}) == "us-central1"
    assert spider.region_of({"Region": "europe-west4", "AvailabilityZone": "x-b"}) == "europe-west4"


def test_a_page_it_does_not_know_fails_the_run():
    parsed = parse_fixture("skypilot_gcp", "../lambda_cloud/lambda_pricing-page_20260109.html")
    assert parsed["status"] == "failed"
