"""The canonical GPU table and the one way provider spellings map onto it."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REFERENCE_DIR = Path(__file__).parent / "reference"

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
