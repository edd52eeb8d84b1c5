"""Hyperstack's GPU VMs from SkyPilot's catalog (on demand; no spot prices).

A second source for Hyperstack besides its pricing page (``hyperstack``): SkyPilot's
catalog, which names the form factor in the GPU name (``H100-80G-SXM5``,
``A100-80G-PCIe-NVLink``).

Quirk: ``GpuInfo`` is a Python repr with JSON's ``null`` in it (``'Manufacturer':
null``), which neither a JSON nor a Python parser reads; the ``null`` is made Python's
``None`` before ``SizeInMiB`` (per GPU, MiB) is read.
"""

from __future__ import annotations

import re

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

_JSON_NULL = re.compile(r"\bnull\b")


class SkypilotHyperstackSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_hyperstack"
    start_urls = [catalog_url("hyperstack")]
    refresh_cron = "13 */6 * * *"
    item_attributes = {
        "provider": "hyperstack",
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        return super().gpu_memory_gb({**row, "GpuInfo": _JSON_NULL.sub("None", row["GpuInfo"])})
