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


# form-factor words inside instance type names; a digit may follow (sxm4, sxm5) and a count
# may be glued on ("sxm4x8"), but no other letters around them
_FORM_TOKEN = re.compile(r"(?<![a-z])(sxm|pcie|nvl)(?=\d|x\d|[^a-z]|$)")
_FORM_FACTORS = {"sxm": "SXM", "pcie": "PCIe", "nvl": "NVL"}


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

    def canonical(
        self, name: str | None, memory_gb: float | None = None, hint: str | None = None
    ) -> str | None:
        """The canonical model for a published name, or None when it is not certain.

        Most specific first: the name with its memory size ("A100 SXM" + 80 GB ->
        "A100 SXM 80GB"), then the name alone. Never a substring match: "A100"
        alone is ambiguous and stays unknown. A match whose memory disagrees with
        the published memory (by more than 10%) is refused too.

        ``hint`` (the offer's instance type): where the name alone is ambiguous, a form
        factor the instance type names, exactly one of SXM, PCIe or NVL ("gpu_1x_h100_pcie",
        "gpu-h200-sxm_1gpu-16vcpu-200gb", "1x-H100_NVL-32-65536"), is added to the name
        and the result must still match a spelling exactly.
        """
        if not name:
            return None
        found = self._exact(name, memory_gb)
        if found is not None or not hint:
            return found
        forms = {_FORM_FACTORS[token] for token in _FORM_TOKEN.findall(hint.lower())}
        if len(forms) != 1:
            return None
        return self._exact(f"{name} {forms.pop()}", memory_gb)

    def _exact(self, name: str, memory_gb: float | None) -> str | None:
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
