"""GPU instances resold through Shadeform, from SkyPilot's catalog (on demand).

Shadeform is a broker: the ``InstanceType`` prefix names the cloud behind each row
(``lambdalabs_A6000x4`` is Lambda's). A prefix not listed here is not guessed: the
row keeps no provider and is dropped by validation, counted per prefix.
Quirk: ``GpuInfo.SizeInMiB`` holds GB (80 for an H100), not MiB.
"""

from __future__ import annotations

from fabricscope.scrapers.spiders._skypilot import SkyPilotCatalog, catalog_url, size_in_mib
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

PROVIDERS = {
    "lambdalabs": "lambda",
    "crusoe": "crusoe",
    "massedcompute": "massed_compute",
    "scaleway": "scaleway",
    "paperspace": "paperspace",
    "hyperstack": "hyperstack",
    "denvr": "denvr",
    "vultr": "vultr",
    "excesssupply": "excess_supply",
}


class SkypilotShadeformSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_shadeform"
    start_urls = [catalog_url("shadeform")]
    refresh_cron = "43 */6 * * *"
    item_attributes = {
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
    broker_providers = PROVIDERS

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        return size_in_mib(row)  # already GB, whatever the key says
