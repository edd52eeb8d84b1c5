"""AWS EC2 GPU instances from SkyPilot's catalog: on demand and spot, per region.

The catalog has one row per availability zone (``AvailabilityZone``, e.g. use1-az2):
they are collapsed into one offer per (instance type, region, tier) whose ``zones``
counts the zones selling it. On-demand prices are regional (equal in every zone);
spot prices differ by zone, so a spot offer is the cheapest zone's spot price, and
each offer whose zones disagree is counted in ``fabricscope/zones/price_differs``.

Quirks, each counted in ``fabricscope/skipped/<reason>`` per catalog row:

- Not GPUs: Inferentia (inf1/inf2), Trainium (trn1/trn1n), Qualcomm AI100 (dl2q) and
  the FPGAs of f1/f2 have an empty ``GpuInfo``; Gaudi (dl1) has one but is Habana's
  AI accelerator, no GPU. All are ``not_a_gpu/<AcceleratorName>``.
- GPU slices: g6f/gr6f sell 1/8 to 1/2 of an L4 (``AcceleratorCount`` 0.125-0.5):
  ``fractional_gpu``.
- ``p5e.48xlarge`` has no on-demand ``Price`` in any zone: only its spot offers exist
  (rows with neither price are ``no_price``).
- Names: ``A100-80GB`` (p4de) and ``V100-32GB`` (p3dn) while ``GpuInfo`` says A100 /
  V100; ``GpuInfo.SizeInMiB`` is per GPU, in MiB (81920 for p4de), and is used.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotAwsSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_aws"
    start_urls = [catalog_url("aws")]
    refresh_cron = "3 */6 * * *"
    zone_column = "AvailabilityZone"
    item_attributes = {
        "provider": "aws",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
