"""GPU instances resold through Prime Intellect, from SkyPilot's catalog (on demand, spot).

Prime Intellect is a broker: the ``InstanceType`` prefix before ``__`` names the cloud
behind each row (``datacrunch__8xH100_80GB__176__1480`` is DataCrunch's). A prefix not
listed here is not guessed (``dc_wildebeest``, ``dc_roan`` and ``primecompute`` name no
cloud we know): the row keeps no provider and is dropped by validation, counted per prefix.

Quirks of this catalog:

- ``GpuInfo.SizeInMiB`` is the memory of all the row's GPUs together (8x A100 80GB:
  655360 MiB), so it is divided by ``AcceleratorCount``; ``TotalGpuMemoryInMiB`` is
  over-counted once more (5242880) and not read;
- a ``<type>__SPOT`` row (empty ``Price``, a ``SpotPrice``) is the spot price of
  ``<type>``, a row of its own with the same specs and zone: it is yielded as the spot
  offer of ``<type>``, so one instance type carries both of its prices, as in the
  Verda catalog. Such a row's ``Price``, if it ever had one, is not an on-demand price
  of ``<type>`` (that row has its own): it is counted and not read;
- ``Region`` is a country (US, FI) and ``AvailabilityZone`` the cloud's location in it
  (FIN-01, us-east1-a); a type can be listed in several zones of one country
  (DataCrunch's FIN-01 and FIN-02): they are one offer per (instance type, region,
  tier) whose ``zones`` counts them;
- CPU-only rows (75 of 190) are skipped and counted.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricscope.scrapers.normalise import parse_number
from fabricscope.scrapers.spiders._skypilot import (
    MIB_PER_GIB,
    SkyPilotCatalog,
    catalog_url,
    size_in_mib,
)
from fabricscope.scrapers.spiders.base import CsvCatalogSpider

SPOT_SUFFIX = "__SPOT"
# the clouds behind Prime Intellect (its API's provider types) that we know by name
PROVIDERS = {
    "lambdalabs": "lambda",
    "hyperstack": "hyperstack",
    "oblivus": "oblivus",
    "datacrunch": "datacrunch",
    "latitude": "latitude",
    "crusoecloud": "crusoe",
    "nebius": "nebius",
    "runpod": "runpod",
    "fluidstack": "fluidstack",
    "cudocompute": "cudo_compute",
    "scaleway": "scaleway",
    "massedcompute": "massed_compute",
    "vultr": "vultr",
    "denvr": "denvr",
}


class SkypilotPrimeintellectSpider(SkyPilotCatalog, CsvCatalogSpider):
    name = "skypilot_primeintellect"
    start_urls = [catalog_url("primeintellect")]
    refresh_cron = "7 */6 * * *"
    zone_column = "AvailabilityZone"
    item_attributes = {
        "currency": "USD",
        "price_basis": "per_instance",
        "obtained_by": "catalog",
    }
    broker_providers = PROVIDERS
    broker_separator = "__"

    def zone_rows(self, rows: list[dict[str, str]]) -> Iterator[dict[str, str]]:
        for row in rows:
            if row["InstanceType"].endswith(SPOT_SUFFIX):
                if row["Price"].strip():
                    self.count_skip("price_on_spot_row")
                base = row["InstanceType"].removesuffix(SPOT_SUFFIX)
                row = {**row, "InstanceType": base, "Price": ""}  # its spot price only
            yield row

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        total = size_in_mib(row)
        count = parse_number(row["AcceleratorCount"])
        return round(total / count / MIB_PER_GIB, 2) if total and count else None
