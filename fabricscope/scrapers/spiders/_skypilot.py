"""Row logic shared by the SkyPilot catalog spiders (this module holds no spider).

SkyPilot publishes one ``vms.csv`` per cloud (catalog schema v8, see the README of
skypilot-org/skypilot-catalog; Azure's newest is v6). Columns are read by header
because their order differs per cloud. Each GPU row gives a whole-instance price per
hour in ``Price`` (on demand) and ``SpotPrice`` (spot); an empty cell means there is
no such offer. Each catalog has its own quirks (units in ``GpuInfo``, placeholder
prices, brokers, one row per availability zone): a spider overrides the hook that its
quirk concerns.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from scrapy.http import Response

from fabricscope.scrapers.items import RawItem, RawOffer
from fabricscope.scrapers.normalise import parse_number

CATALOGS = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"
MIB_PER_GIB = 1024  # GPU makers' "80 GB" is binary: an H100's 81920 MiB


def catalog_url(cloud: str, schema: str = "v8") -> str:
    """The live catalog of one cloud (``master`` is what SkyPilot itself reads)."""
    return f"{CATALOGS}/{schema}/{cloud}/vms.csv"


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


def _amount(price: str) -> float:
    """A price cell as a number for comparing zones; text that is no number sorts last."""
    number = parse_number(price)
    return float("inf") if number is None else number


class SkyPilotCatalog:
    """Mixin for a ``CsvCatalogSpider``: one offer per priced column of each GPU row (rows
    left out are counted by the spider's ``count_skip``).

    Hooks: ``skip_reason`` (rows that are no GPU offer, counted), ``prices`` (which
    columns are real prices), ``gpu_count``, ``gpu_memory_gb`` (per GPU, in GB),
    ``provider_of`` (for a broker, the cloud behind a row: or just set
    ``broker_providers``), ``host`` (vCPUs, RAM), ``region_of``.

    Zoned catalogs (AWS, GCP, OCI list one row per availability zone or domain): set
    ``zone_column`` to the column naming the zone. The whole file is then read first
    and ``zone_rows`` (override it to pair or rewrite rows, as GCP does) gives the rows
    to price; they are grouped into ONE offer per (instance type, region, tier) whose
    ``zones`` is the number of zones giving that tier a price. Where zones of one region
    disagree, the lowest price is the offer's (for spot: the cheapest zone's spot price)
    and ``fabricscope/zones/price_differs`` counts it. Without ``zone_column`` each row
    is its own offer, as it always was.
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
    zone_column: ClassVar[str | None] = None
    # a broker's catalog: InstanceType prefix -> provider slug (see ``provider_of``)
    broker_providers: ClassVar[dict[str, str]] = {}
    broker_separator: ClassVar[str] = "_"
    # AcceleratorName values that are accelerators but no GPUs although ``GpuInfo``
    # describes them (a row with an empty ``GpuInfo`` is no GPU in any catalog)
    # Intel Gaudi (AWS dl1's "Gaudi HL-205", Shadeform's "GAUDI2") is an AI accelerator with
    # its own software stack, not a GPU: skipped in every catalog alike
    not_gpus: ClassVar[frozenset[str]] = frozenset({"Gaudi HL-205", "GAUDI2"})
    crawler: Any
    name: str
    _zone_rows: list[dict[str, str]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.zone_column:  # a catalog without its zone column has an unknown layout
            cls.required_columns = cls.required_columns | {cls.zone_column}

    def parse(self, response: Response, **kwargs: Any) -> Iterator[RawItem]:
        if self.zone_column is None:
            yield from super().parse(response, **kwargs)  # row by row
            return
        self._zone_rows = []
        yield from super().parse(response, **kwargs)  # parse_row only collects the rows
        yield from self.regional_offers(self.zone_rows(self._zone_rows), response)

    def parse_row(self, row: dict[str, str], response: Response) -> Iterator[RawOffer]:
        if self.zone_column is not None:
            self._zone_rows.append(row)  # priced per region once the whole file is read
            return
        for tier, price in self.priced(row):
            yield self.offer(row, tier, price, response)

    def regional_offers(
        self, rows: Iterable[dict[str, str]], response: Response
    ) -> Iterator[RawOffer]:
        """One offer per (instance type, region, tier): its cheapest zone, ``zones`` counted."""
        assert self.zone_column is not None
        quotes: dict[tuple[str, str, str], list[tuple[str, dict[str, str]]]] = {}
        for row in rows:
            for tier, price in self.priced(row):
                key = (row["InstanceType"], self.region_of(row), tier)
                quotes.setdefault(key, []).append((price, row))
        for (_, _, tier), zoned in quotes.items():
            price, row = min(zoned, key=lambda quote: _amount(quote[0]))
            if len({_amount(p) for p, _ in zoned}) > 1:
                self.crawler.stats.inc_value("fabricscope/zones/price_differs")
                self.crawler.stats.inc_value(f"fabricscope/zones/price_differs/{tier}")
            zones = len({r[self.zone_column].strip() for _, r in zoned})
            yield self.offer(row, tier, price, response, zones=zones)

    def zone_rows(self, rows: list[dict[str, str]]) -> Iterable[dict[str, str]]:
        """The rows to price, from all of a zoned catalog's rows (by default, as they are)."""
        return rows

    def priced(self, row: dict[str, str]) -> list[tuple[str, str]]:
        """The row's (tier, price) pairs; none for a skipped row, its reason counted."""
        reason = self.skip_reason(row)
        prices = [] if reason else list(self.prices(row))
        if reason is None and not prices:
            reason = "no_price"  # no price cell filled (or none real): nothing to offer
        if reason is not None:
            self.count_skip(reason)
        return prices

    def skip_reason(self, row: dict[str, str]) -> str | None:
        """Why a row is no GPU offer (``fabricscope/skipped/<reason>``), or None."""
        name = row["AcceleratorName"].strip()
        if not name:  # a CPU-only machine is not a GPU offer
            return "cpu_only"
        # SkyPilot's own `show-gpus` keeps only rows with a GpuInfo (gpus_only in
        # sky/catalog/gcp_catalog.py): an empty one is an FPGA, Inferentia, Trainium...
        if not row["GpuInfo"].strip() or name in self.not_gpus:
            return f"not_a_gpu/{name}"
        count = parse_number(row["AcceleratorCount"])
        if count is not None and count % 1:
            return "fractional_gpu"  # a slice of one GPU (AWS g6f: 0.125) is no GPU count
        return None

    def offer(
        self, row: dict[str, str], tier: str, price: str, response: Response, **fields: Any
    ) -> RawOffer:
        vcpus, ram_gb = self.host(row)
        return RawOffer(
            provider=self.provider_of(row),
            instance_type=row["InstanceType"],
            region=self.region_of(row),
            gpu_name=row["AcceleratorName"],
            gpu_count=self.gpu_count(row),
            gpu_memory_gb=self.gpu_memory_gb(row),
            vcpus=vcpus,
            ram_gb=ram_gb,  # GiB as published
            pricing_tier=tier,
            price=price,
            source_url=response.url,
            **fields,
        )

    def prices(self, row: dict[str, str]) -> Iterator[tuple[str, str]]:
        """(tier, price) for each price the row gives; an empty cell is no offer."""
        for tier, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
            if row[column].strip():
                yield tier, row[column]

    def gpu_count(self, row: dict[str, str]) -> str:
        return row["AcceleratorCount"]

    def gpu_memory_gb(self, row: dict[str, str]) -> float | None:
        """Per GPU: ``SizeInMiB`` holds one GPU's memory in MiB in most catalogs."""
        size = size_in_mib(row)
        return round(size / MIB_PER_GIB, 2) if size else None

    def provider_of(self, row: dict[str, str]) -> str | None:
        """A broker's row (``broker_providers`` set): the cloud its ``InstanceType`` prefix
        names, before ``broker_separator``; a prefix not listed is not guessed (None, so
        validation drops the row), counted per prefix. Otherwise None: the spider's
        item_attributes say whose catalog it is."""
        if not self.broker_providers:
            return None
        prefix = row["InstanceType"].split(self.broker_separator, 1)[0]
        provider = self.broker_providers.get(prefix)
        if provider is None:
            self.crawler.stats.inc_value(f"fabricscope/{self.name}/unknown_prefix/{prefix}")
        return provider

    def host(self, row: dict[str, str]) -> tuple[str | None, str | None]:
        return row["vCPUs"], row["MemoryGiB"]

    def region_of(self, row: dict[str, str]) -> str:
        return row["Region"]
