"""Trim text, turn empty cells into None, read numbers, prices and yes/no out of text."""

from __future__ import annotations

from scrapers.items import RawFabricFact, RawItem, RawOffer
from scrapers.normalise import parse_number, parse_price
from scrapers.pipelines import FabricscopePipeline

_NUMBERS = {
    RawOffer: ("gpu_count", "gpu_memory_gb", "vcpus", "ram_gb"),
    RawFabricFact: ("fabric_gbps_per_node", "fabric_gbps_per_gpu", "max_cluster_gpus"),
}
_YES = {"yes", "true", "y", "1"}
_NO = {"no", "false", "n", "0"}


def _yes_no(value: object) -> bool | None:
    if isinstance(value, bool) or value is None:
        return value
    text = str(value).strip().lower()
    return True if text in _YES else False if text in _NO else None  # "unknown" stays unknown


class CleanPipeline(FabricscopePipeline):
    def process_item(self, item: RawItem) -> RawItem:
        for name in list(item.keys()):
            value = item[name]
            if isinstance(value, str):
                value = " ".join(value.split())
                item[name] = value or None
        for name in _NUMBERS[type(item)]:
            if item.get(name) is not None:
                item[name] = parse_number(item[name])
        if isinstance(item, RawOffer):
            self._price(item)
        else:
            for name in ("rdma", "gpudirect_rdma", "multi_node"):
                item[name] = _yes_no(item.get(name))
        return item

    def _price(self, item: RawOffer) -> None:
        parsed = parse_price(item.get("price"))
        if parsed is None:
            raise self.drop("no_price", f"{item.get('instance_type')!r}: {item.get('price')!r}")
        declared = item.get("currency")
        if parsed.currency and declared and parsed.currency != declared:
            raise self.drop(
                "currency_conflict",
                f"{item.get('instance_type')!r}: page shows {parsed.currency}, "
                f"spider declares {declared}",
            )
        item["price"] = parsed.amount
        item["currency"] = declared or parsed.currency
