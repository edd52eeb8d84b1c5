"""Oracle Cloud (OCI) GPU shapes from SkyPilot's catalog: on demand, and spot where given.

One row per availability domain (``AvailabilityZone``, e.g. US-ASHBURN-AD-1): they
are collapsed into one offer per (shape, region, tier) with ``zones`` = the number of
availability domains listing it. ``Price`` is for the whole shape (BM.GPU.H100.8: 80
USD/h for 8 GPUs) and is the same in every region; ``SpotPrice`` (preemptible, half
of ``Price``) exists only for VM.GPU2.1 and VM.GPU3.x.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotOciSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_oci"
    start_urls = [catalog_url("oci")]
    refresh_cron = "15 */6 * * *"
    zone_column = "AvailabilityZone"
    item_attributes = {
        "provider": "oracle",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
