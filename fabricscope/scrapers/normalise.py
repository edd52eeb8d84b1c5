"""Pure helpers the pipelines use: GPU names, prices in text, currencies."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fabricscope.warehouse.gpus import REFERENCE_DIR, GpuCatalog, gpu_catalog, match_key

__all__ = [
    "GpuCatalog",
    "ParsedPrice",
    "gpu_catalog",
    "match_key",
    "parse_number",
    "parse_price",
    "usd_rates",
]


@cache
def usd_rates(reference_dir: Path = REFERENCE_DIR) -> dict[str, float]:
    """USD per unit of each currency with a sourced rate (dated in fx_rates.csv)."""
    with (reference_dir / "fx_rates.csv").open(newline="", encoding="utf-8") as handle:
        return {
            row["currency"]: float(row["usd_per_unit"])
            for row in csv.DictReader(handle)
            if row["usd_per_unit"]
        }


_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
_AMOUNT = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?")
_NO_PRICE = re.compile(
    r"contact|sales|request|quote|coming soon|sold out|n/?a\b|unavailable|call us|tbd|—|^-$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedPrice:
    amount: float
    currency: str | None  # from a symbol or code in the text, if any


def parse_price(value: object) -> ParsedPrice | None:
    """A price from a number or a text like "$2.99 / GPU / hr"; None when there is none.

    "Contact sales", "Coming soon" and empty cells are not prices.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return ParsedPrice(float(value), None)
    text = str(value).strip()
    if not text or _NO_PRICE.search(text):
        return None
    found = _AMOUNT.search(text)
    if found is None:
        return None
    amount = float(found.group(1).replace(",", "") + (found.group(2) or ""))
    currency = next((code for symbol, code in _SYMBOLS.items() if symbol in text), None)
    if currency is None:
        code = re.search(r"\b(USD|EUR|GBP)\b", text)
        currency = code.group(1) if code else None
    return ParsedPrice(amount, currency)


def parse_number(value: object) -> float | None:
    """A plain number from a cell such as "80 GB", "1,800 GiB" or "208"."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    found = _AMOUNT.search(str(value))
    return (
        None if found is None else float(found.group(1).replace(",", "") + (found.group(2) or ""))
    )
