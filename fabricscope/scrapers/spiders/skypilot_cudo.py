"""CUDO Compute's GPU VMs from SkyPilot's catalog (on demand; no spot prices).

Quirks of this catalog, none of which needs code:

- ``Price`` carries binary float artefacts (``0.36979999999999996``): that number is the
  price, read as it stands (the USD fields are rounded to 6 decimals downstream);
- its columns come in their own order (``...,Price,Region,GpuInfo,SpotPrice``): they
  are read by header name;
- ``GpuInfo``'s ``Count`` is a string (``'1.0'``): the GPU count is ``AcceleratorCount``,
  a number, and ``GpuInfo`` is read for ``SizeInMiB`` only (per GPU, MiB).
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider


class SkypilotCudoSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_cudo"
    start_urls = [catalog_url("cudo")]
    refresh_cron = "1 */6 * * *"
    item_attributes = {
        "provider": "cudo_compute",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
