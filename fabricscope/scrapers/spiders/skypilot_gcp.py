"""Google Cloud GPU machine types from SkyPilot's catalog: on demand and spot, per region.

The catalog prices a GPU VM in two kinds of row, both one per zone:

- accelerator rows: empty ``InstanceType``; ``AcceleratorName`` x ``AcceleratorCount``
  and ``Price`` = the GPUs alone, for that count in that zone;
- host rows: the machine type (a2-/a3-/a4-/g2-), empty ``AcceleratorName``; ``Price``
  = vCPUs and RAM alone.

An offer is a machine type in a region, priced as its host row plus the accelerator
row of its GPU and count in the same zone (e.g. a3-megagpu-8g = host + 8 x H100-MEGA
accelerator rows; us-central1-a a2-highgpu-1g: 0.73948 + A100 x1 2.93391 = 3.67339),
and spot likewise from the two ``SpotPrice`` cells (no spot where either is empty).
This is how SkyPilot itself prices them (``list_accelerators`` in
sky/catalog/gcp_catalog.py adds ``Price_host``). Zones are then collapsed into one
offer per (machine type, region, tier) with ``zones`` counted; where zones differ the
lowest sum is the offer's (for spot, the cheapest zone's) and
``fabricscope/zones/price_differs`` counts it. ``Region`` is read from its column;
only where it is empty is it derived from the zone, whose name is ``<region>-<letter>``
("us-central1-a" is in "us-central1", https://cloud.google.com/compute/docs/regions-zones).

a4-highgpu-8g host rows read Price 0.0 / SpotPrice 0.0 upstream: its whole price is
the B200 accelerator rows. Counted in ``fabricscope/skipped/<reason>``, per row:

- ``gcp_no_host_row``: accelerator rows no host row uses. T4, V100, P100 and P4 are
  attached to N1 VMs of the buyer's choice, whose price is not in the catalog's GPU
  rows: no host price is invented, so they give no offer;
- ``gcp_no_accelerator_row``: a GPU machine type in a zone without the accelerator
  row of its GPUs;
- ``gcp_unmapped_machine_type/<type>``: an accelerator-optimized machine type
  (a<N>-/g<N>-) that ``machine_gpus`` does not know;
- ``gcp_host_row_names_gpus``: a GPU machine type's row that itself names GPUs (not
  this catalog version's layout; its price may already include them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

# The GPUs built into each accelerator-optimized machine type, as Google's GPU machine
# types page lists them (https://cloud.google.com/compute/docs/gpus): A2 Standard
# a2-highgpu-Ng / a2-megagpu-16g carry N (16) A100 40GB, A2 Ultra a2-ultragpu-Ng N A100
# 80GB, A3 High / Edge a3-highgpu-Ng / a3-edgegpu-8g N H100, A3 Mega a3-megagpu-8g 8
# H100 (SkyPilot's "H100-MEGA"), A3 Ultra a3-ultragpu-8g 8 H200, A4 a4-highgpu-8g 8
# B200; the G2 series carries L4s in fixed counts. The same mapping is SkyPilot's
# _ACC_INSTANCE_TYPE_DICTS (sky/catalog/gcp_catalog.py); the names are those of the
# catalog's accelerator rows. "-nolssd" types are the same VM without local SSD.
FAMILY_GPUS = {
    "a2-highgpu": "A100",
    "a2-megagpu": "A100",
    "a2-ultragpu": "A100-80GB",
    "a3-highgpu": "H100",
    "a3-edgegpu": "H100",
    "a3-megagpu": "H100-MEGA",
    "a3-ultragpu": "H200",
    "a4-highgpu": "B200",
}
_FAMILY_TYPE = re.compile(r"^(?P<family>[a-z]\d+-[a-z]+)-(?P<count>\d+)g(?:-nolssd)?$")
G2_L4_COUNTS = {  # g2-standard-<vCPUs>: L4 GPUs, from the same page's G2 table
    "g2-standard-4": 1,
    "g2-standard-8": 1,
    "g2-standard-12": 1,
    "g2-standard-16": 1,
    "g2-standard-32": 1,
    "g2-standard-24": 2,
    "g2-standard-48": 4,
    "g2-standard-96": 8,
}
_ACCELERATOR_OPTIMIZED = re.compile(r"^[ag]\d+x?-")  # A2, A3, A4, A4X, G2, G4 series


def machine_gpus(machine_type: str) -> tuple[str, int] | None:
    """(accelerator name, count) built into a machine type; None for any other type."""
    if machine_type in G2_L4_COUNTS:
        return "L4", G2_L4_COUNTS[machine_type]
    match = _FAMILY_TYPE.match(machine_type)
    if match and match["family"] in FAMILY_GPUS:
        return FAMILY_GPUS[match["family"]], int(match["count"])
    return None


def _sum(host: str, accelerators: str) -> str:
    """Two price cells added up; empty when either is (no such price in that zone)."""
    a, b = parse_number(host), parse_number(accelerators)
    return "" if a is None or b is None else str(round(a + b, 6))


class SkypilotGcpSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_gcp"
    start_urls = [catalog_url("gcp")]
    refresh_cron = "9 */6 * * *"
    zone_column = "AvailabilityZone"
    item_attributes = {
        "provider": "gcp",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def zone_rows(self, rows: list[dict[str, str]]) -> Iterator[dict[str, str]]:
        """Each GPU machine type's host row merged with its accelerator row, per zone."""
        accelerators: dict[tuple[str, str, float | None], dict[str, str]] = {}
        hosts = []
        for row in rows:
            if not row["InstanceType"].strip() and row["AcceleratorName"].strip():
                key = (
                    row["AvailabilityZone"],
                    row["AcceleratorName"],
                    parse_number(row["AcceleratorCount"]),
                )
                accelerators[key] = row
            else:
                hosts.append(row)
        used: set[tuple[str, str, float | None]] = set()
        for host in hosts:
            machine_type = host["InstanceType"]
            gpus = machine_gpus(machine_type)
            if gpus is None:
                if _ACCELERATOR_OPTIMIZED.match(machine_type):
                    self.count_skip(f"gcp_unmapped_machine_type/{machine_type}")
                else:
                    yield host  # a CPU machine type, skipped (and counted) as such
                continue
            if host["AcceleratorName"].strip():  # not this version's layout: adding the
                self.count_skip("gcp_host_row_names_gpus")  # GPU rows might count them twice
                continue
            key = (host["AvailabilityZone"], gpus[0], float(gpus[1]))
            accelerator = accelerators.get(key)
            if accelerator is None:
                self.count_skip("gcp_no_accelerator_row")
                continue
            used.add(key)
            yield {
                **host,
                "AcceleratorName": accelerator["AcceleratorName"],
                "AcceleratorCount": accelerator["AcceleratorCount"],
                "GpuInfo": accelerator["GpuInfo"],
                "Price": _sum(host["Price"], accelerator["Price"]),
                "SpotPrice": _sum(host["SpotPrice"], accelerator["SpotPrice"]),
            }
        for key, accelerator in accelerators.items():
            if key not in used:
                reason = self.skip_reason(accelerator)  # e.g. a TPU: not_a_gpu/<name>
                self.count_skip(reason or "gcp_no_host_row")

    def region_of(self, row: dict[str, str]) -> str:
        return row["Region"].strip() or row["AvailabilityZone"].strip().rsplit("-", 1)[0]
