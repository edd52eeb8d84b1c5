"""Row logic shared by the SkyPilot catalog spiders (this module holds no spider).

SkyPilot publishes one ``vms.csv`` per cloud (catalog schema v8, see the README of
skypilot-org/skypilot-catalog). Columns are read by header because their order
differs per cloud. Each GPU row gives a whole-instance price per hour in ``Price``
(on demand) and ``SpotPrice`` (spot); an empty cell means there is no such offer.
Each catalog has its own quirks (units in ``GpuInfo``, placeholder prices, brokers):
a spider overrides the hook that its quirk concerns.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from scrapers.items import RawOffer

CATALOG = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8"
MIB_PER_GIB = 1024  # GPU makers' "80 GB" is binary: an H100's 81920 MiB


def catalog_url(cloud: str) -> str:
    """The live catalog of one cloud (``master`` is what SkyPilot itself reads)."""
    return f"{CATALOG}/{cloud}/vms.csv"


def first_gpu(cell: str) -> dict[str, Any]:
    """``GpuInfo``'s first GPU: a Python-repr dict in most catalogs, JSON in Verda's."""
    try:
        info = json.loads(cell)
    except ValueError:
        try:
            info = ast.literal_eval(cell)
        except (ValueError, SyntaxError):
            return {}
    gpus = info.get("Gpus") if isinstance(info, dict) else None
    return gpus[0] if isinstance(gpus, list) and gpus and isinstance(gpus[0], dict) else {}


def size_in_mib(row: dict[str, str]) -> float | None:
    """The number in ``GpuInfo.Gpus[0].MemoryInfo.SizeInMiB`` (its unit varies by catalog)."""
    memory = first_gpu(row["GpuInfo"]).get("MemoryInfo")
    size = memory.get("SizeInMiB") if isinstance(memory, dict) else None
    return float(size) if isinstance(size, int | float) and size > 0 else None


class SkyPilotCatalog:
    """Mixin for a ``CsvCatalogSpider``: one offer per priced column of each GPU row.

    Hooks: ``prices`` (which columns are real prices), ``gpu_memory_gb`` (per GPU, in
    GB), ``provider_of`` (for a broker, the cloud behind a row), ``host`` (vCPUs, RAM).
    """

    required_columns: ClassVar[frozenset[str]] = frozenset(
        {
            "InstanceType",
            "AcceleratorName",
            "AcceleratorCount",
            "vCPUs",
            "MemoryGiB",
            "Price",
            "SpotPrice",
            "Region",
            "GpuInfo",
        }
    )
    crawler: Any

    def parse_row(self, row: dict[str, str], response: Response) -> Iterator[RawOffer]:
        if not row["AcceleratorName"].strip():  # a CPU-only machine is not a GPU offer
            self.crawler.stats.inc_value("fabricscope/skipped/cpu_only")
            return
        vcpus, ram_gb = self.host(row)
        for tier, price in self.prices(row):
            yield RawOffer(
                provider=self.provider_of(row),
                instance_type=row["InstanceType"],
                region=row["Region"],
                gpu_name=row["AcceleratorName"],
                gpu_count=row["AcceleratorCount"],
                gpu_memory_gb=self.gpu_memory_gb(row),
                vcpus=vcpus,
                ram_gb=ram_gb,  # GiB as published
                pricing_tier=tier,
                price=price,
                source_url=response.url,
            )

    def prices(self, row: dict[str, str]) -> Iterator[tuple[str, str]]:
        """(tier, price) for each price the row gives; an empty cell is no offer."""
        for tier, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
            if row[column].strip():
                yield tier, row[column]

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        """Per GPU: ``SizeInMiB`` holds one GPU's memory in MiB in most catalogs."""
        size = size_in_mib(row)
        return round(size / MIB_PER_GIB, 2) if size else None

    def provider_of(self, row: dict[str, str]) -> str | None:
        return None  # the spider's item_attributes say whose catalog it is

    def host(self, row: dict[str, str]) -> tuple[str | None, str | None]:
        return row["vCPUs"], row["MemoryGiB"]
