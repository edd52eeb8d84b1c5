"""Trim text, turn empty cells into None, read numbers, prices and yes/no out of text.

Text never carries control characters past this step: a terminal escape sequence in a
provider's name ("\\x1b[2J") is removed whole, any other control character becomes a space
(counted under ``fabricscope/cleaned/control_characters``), so no output format writes one.
A name longer than ``MAX_NAME_CHARS`` (a provider, an instance type, a region, a GPU) is no
name but a page read wrong: the item is dropped as ``name_too_long``.
"""

from __future__ import annotations

import re

from fabricscope.scrapers.items import RawFabricFact, RawItem, RawOffer
from fabricscope.scrapers.normalise import parse_number, parse_price
from fabricscope.scrapers.pipelines import FabricscopePipeline

_NUMBERS = {
    RawOffer: ("gpu_count", "gpu_memory_gb", "vcpus", "ram_gb"),
    RawFabricFact: ("fabric_gbps_per_node", "fabric_gbps_per_gpu", "max_cluster_gpus"),
}
# ANSI escape sequences (CSI "ESC [ ... letter" and two-character "ESC x"), then any other
# C0/C1 control character, as the CLI's table printer escapes them
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# several times the longest name in the recorded catalogs
MAX_NAME_CHARS = 200
_NAMES = ("provider", "instance_type", "region", "gpu_name", "fabric_product", "intra_node_link")
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
                value = " ".join(self._printable(value).split())
                item[name] = value or None
        for name in _NAMES:
            value = item.get(name)
            if isinstance(value, str) and len(value) > MAX_NAME_CHARS:
                raise self.drop(
                    "name_too_long",
                    f"{name} of {len(value):,} characters (at most {MAX_NAME_CHARS}): "
                    f"{value[:60]!r}...",
                )
        for name in _NUMBERS[type(item)]:
            if item.get(name) is not None:
                item[name] = parse_number(item[name])
        if isinstance(item, RawOffer):
            self._price(item)
        else:
            for name in ("rdma", "gpudirect_rdma", "multi_node"):
                item[name] = _yes_no(item.get(name))
        return item

    def _printable(self, text: str) -> str:
        if not _UNPRINTABLE.search(text):
            return text  # tabs and line breaks are whitespace, folded by the caller
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("fabricscope/cleaned/control_characters")
        return _CONTROL.sub(" ", _ESCAPE_SEQUENCE.sub("", text))

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
