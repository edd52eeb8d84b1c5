"""Pure helpers the pipelines use: GPU names, prices in text, currencies."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from warehouse.load import REFERENCE_DIR

_SEPARATORS = re.compile(r"[\s_\-]+")
# Brand words that never tell two models apart ("NVIDIA Tesla V100" = "V100").
_BRAND = re.compile(r"^(?:(?:nvidia|amd|tesla|instinct)[\s_\-]+)+", re.IGNORECASE)


def match_key(spelling: str) -> str:
    """Without brand words, spaces, hyphens, underscores, in lower case.

    That is the only fuzziness allowed: what remains must match exactly.
    """
    return _SEPARATORS.sub("", _BRAND.sub("", spelling.strip())).lower()


@dataclass(frozen=True)
class GpuCatalog:
    """Canonical GPU ids and every spelling that maps to exactly one of them."""

    by_key: dict[str, str]
    memory_gb: dict[str, float]

    @classmethod
    def from_csv(cls, path: Path) -> GpuCatalog:
        by_key: dict[str, str] = {}
        memory_gb: dict[str, float] = {}
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row["memory_gb"]:
                    memory_gb[row["gpu_model"]] = float(row["memory_gb"])
                spellings = [row["gpu_model"], *filter(None, row["aliases"].split("|"))]
                for spelling in spellings:
                    key = match_key(spelling)
                    owner = by_key.setdefault(key, row["gpu_model"])
                    if owner != row["gpu_model"]:
                        raise ValueError(
                            f"{path.name}: {spelling!r} names {owner} and {row['gpu_model']}"
                        )
        return cls(by_key, memory_gb)

    def canonical(self, name: str | None, memory_gb: float | None = None) -> str | None:
        """The canonical model for a published name, or None when it is not certain.

        Most specific first: the name with its memory size ("A100 SXM" + 80 GB ->
        "A100 SXM 80GB"), then the name alone. Never a substring match: "A100"
        alone is ambiguous and stays unknown. A match whose memory disagrees with
        the published memory (by more than 10%) is refused too.
        """
        if not name:
            return None
        candidates = [name]
        if memory_gb and not re.search(rf"\b{memory_gb:g}\s*G", name, re.IGNORECASE):
            candidates.insert(0, f"{name} {memory_gb:g}GB")
        for candidate in candidates:
            model = self.by_key.get(match_key(candidate))
            if model is None:
                continue
            known = self.memory_gb.get(model)
            if memory_gb and known and abs(known - memory_gb) > 0.1 * known:
                return None
            return model
        return None


@cache
def gpu_catalog(reference_dir: Path = REFERENCE_DIR) -> GpuCatalog:
    return GpuCatalog.from_csv(reference_dir / "gpus.csv")


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
