"""The canonical GPU table and the one way provider spellings map onto it."""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

REFERENCE_DIR = Path(__file__).parent / "reference"

_SEPARATORS = re.compile(r"[\s_\-]+")
# Brand words that never tell two models apart ("NVIDIA Tesla V100" = "V100").
_BRAND = re.compile(r"^(?:(?:nvidia|amd|tesla|instinct)[\s_\-]+)+", re.IGNORECASE)
# A published memory is within this fraction of the model's nominal size, or it is not that model.
MEMORY_TOLERANCE = 0.10


def match_key(spelling: str) -> str:
    """Without brand words, spaces, hyphens, underscores, in lower case.

    That is the only fuzziness allowed: what remains must match exactly.
    """
    return _SEPARATORS.sub("", _BRAND.sub("", spelling.strip())).lower()


# form-factor words inside instance type names; a digit may follow (sxm4, sxm5) and a count
# may be glued on ("sxm4x8"), but no other letters around them. Cudo spells PCIe "pci"
# ("intel-ice-lake-a100-pci_1x12v24gb").
_FORM_TOKEN = re.compile(r"(?<![a-z])(sxm|pcie?|nvl)(?=\d|x\d|[^a-z]|$)")
_FORM_FACTORS = {"sxm": "SXM", "pcie": "PCIe", "pci": "PCIe", "nvl": "NVL"}

# Words of a published name, used only to say *why* a name did not map and whether it
# contradicts an instance type's documented GPU; never to choose a model.
_MEMORY_WORD = re.compile(r"(\d+(?:\.\d+)?)g(?:b|ib)?")
_FORM_WORD = re.compile(r"(sxm|pcie|nvl)\d*")
# "NVLink" alone does not say which product: an SXM part, an NVL card or a bridged PCIe pair
_NEUTRAL_WORDS = frozenset({"nvlink"})


class Unmapped:
    """Why a published GPU has no canonical model (the Scrapy stats key under gpu_unmapped/)."""

    NOT_IN_GPUS_CSV = "not_in_gpus_csv"  # no model of that name (or of that form) in gpus.csv
    AMBIGUOUS_FORM_FACTOR = "ambiguous_form_factor"  # e.g. bare "H200": SXM or NVL?
    AMBIGUOUS_MEMORY = "ambiguous_memory"  # e.g. "A100 SXM" without a memory size: 40 or 80 GB?
    MEMORY_MISMATCH = "memory_mismatch"  # the published memory fits no model of that name
    NO_EXACT_SPELLING = "no_exact_spelling"  # narrows to one model, but is not one of its aliases
    # the name or memory contradicts the GPU its provider documents for the instance type
    INSTANCE_GPU_CONFLICT = "instance_gpu_conflict"


@dataclass(frozen=True)
class GpuMatch:
    """A canonical model, or None with the reason (None too when no GPU was published)."""

    model: str | None
    reason: str | None = None
    subject: str | None = None  # what the reason is about: the name, or "provider/instance_type"


@dataclass(frozen=True)
class _Words:
    family: str  # the name without brand, memory and form-factor words, as a match key
    form: str | None  # "sxm" | "pcie" | "nvl"
    memory_gb: float | None


def _words(name: str) -> _Words:
    family: list[str] = []
    form: str | None = None
    memory: float | None = None
    for word in _SEPARATORS.split(_BRAND.sub("", name.strip()).lower()):
        if found := _MEMORY_WORD.fullmatch(word):
            memory = float(found.group(1))
        elif found := _FORM_WORD.fullmatch(word):
            form = found.group(1)
        elif word and word not in _NEUTRAL_WORDS:
            family.append(word)
    return _Words("".join(family), form, memory)


def _memory_fits(known: float | None, published: float | None) -> bool:
    return not known or not published or abs(known - published) <= MEMORY_TOLERANCE * known


@dataclass(frozen=True)
class GpuCatalog:
    """Canonical GPU ids, every spelling that maps to exactly one of them, and the GPU of
    each instance type whose provider documents it."""

    by_key: dict[str, str]
    memory_gb: dict[str, float]
    form_factor: dict[str, str] = field(default_factory=dict)
    # model family words (id prefix "A100" of "A100-SXM-40GB", and the aliases' words): only
    # for explaining a miss and for checking a name against an instance type's GPU
    families: dict[str, frozenset[str]] = field(default_factory=dict)
    by_instance: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def from_csv(
        cls, path: Path, instance_models: Mapping[tuple[str, str], str] | None = None
    ) -> GpuCatalog:
        by_key: dict[str, str] = {}
        memory_gb: dict[str, float] = {}
        form_factor: dict[str, str] = {}
        families: dict[str, set[str]] = {}
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                model = row["gpu_model"]
                if row["memory_gb"]:
                    memory_gb[model] = float(row["memory_gb"])
                form_factor[model] = row["form_factor"]
                aliases = [a for a in row["aliases"].split("|") if a.strip()]
                for spelling in [model, *aliases]:
                    key = match_key(spelling)
                    owner = by_key.setdefault(key, model)
                    if owner != model:
                        raise ValueError(f"{path.name}: {spelling!r} names {owner} and {model}")
                for words in [match_key(model.split("-")[0]), *(_words(a).family for a in aliases)]:
                    families.setdefault(words, set()).add(model)
        unknown = {m for m in (instance_models or {}).values() if m not in form_factor}
        if unknown:
            raise ValueError(f"instance_gpus.csv names GPUs not in {path.name}: {sorted(unknown)}")
        return cls(
            by_key,
            memory_gb,
            form_factor,
            {family: frozenset(models) for family, models in families.items()},
            dict(instance_models or {}),
        )

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
        form = self._hinted_form(hint)
        return self._exact(f"{name} {form}", memory_gb) if form else None

    def identify(
        self,
        name: str | None,
        memory_gb: float | None = None,
        instance_type: str | None = None,
        provider: str | None = None,
    ) -> GpuMatch:
        """The model of one offer, and when there is none, why.

        An instance type whose GPU its provider documents (instance_gpus.csv, exact
        provider and instance type) wins over the published name, unless the name or
        the memory contradicts it (another GPU family or form factor, memory off by more
        than 10%): then nothing is certain. Otherwise the name is matched by ``canonical``.
        No published GPU name, no model: the instance type settles which GPU a name
        means, it does not supply one (a price-list line need not be a GPU at all).
        """
        if not name:
            return GpuMatch(None)
        documented = self.by_instance.get((provider or "", instance_type or ""))
        if documented is not None:
            if self._contradicts(documented, name, memory_gb, instance_type):
                subject = f"{provider}/{instance_type}"
                return GpuMatch(None, Unmapped.INSTANCE_GPU_CONFLICT, subject)
            return GpuMatch(documented)
        model = self.canonical(name, memory_gb, instance_type)
        if model is not None:
            return GpuMatch(model)
        return GpuMatch(None, self._why_unmapped(name, memory_gb, instance_type), name)

    def _hinted_form(self, hint: str | None) -> str | None:
        forms = {_FORM_FACTORS[token] for token in _FORM_TOKEN.findall((hint or "").lower())}
        return forms.pop() if len(forms) == 1 else None

    def _exact(self, name: str, memory_gb: float | None) -> str | None:
        model = self._spelled(name, memory_gb)
        if model is None or not _memory_fits(self.memory_gb.get(model), memory_gb):
            return None
        return model

    def _spelled(self, name: str, memory_gb: float | None) -> str | None:
        """The model one of whose spellings the name is (with its memory size first)."""
        candidates = [name]
        if memory_gb and not re.search(rf"\b{memory_gb:g}\s*G", name, re.IGNORECASE):
            candidates.insert(0, f"{name} {memory_gb:g}GB")
            if memory_gb != round(memory_gb):  # 23.99 GiB as measured is a "24GB" card
                candidates.insert(1, f"{name} {round(memory_gb)}GB")
        for candidate in candidates:
            model = self.by_key.get(match_key(candidate))
            if model is not None:
                return model
        return None

    def _contradicts(
        self, model: str, name: str, memory_gb: float | None, instance_type: str | None
    ) -> bool:
        if not _memory_fits(self.memory_gb.get(model), memory_gb):
            return True
        named = self.canonical(name, memory_gb, instance_type)
        if named is not None:
            return named != model
        words = _words(name)
        return (
            model not in self.families.get(words.family, frozenset())
            or (words.form is not None and words.form != self.form_factor.get(model))
            or not _memory_fits(self.memory_gb.get(model), words.memory_gb)
        )

    def _why_unmapped(self, name: str, memory_gb: float | None, hint: str | None) -> str:
        spelled = self._spelled(name, memory_gb)
        if spelled is not None:  # a spelling of one model, but its memory is not published's
            return Unmapped.MEMORY_MISMATCH
        words = _words(name)
        models = self.families.get(words.family)
        if not models:
            return Unmapped.NOT_IN_GPUS_CSV
        hinted = self._hinted_form(hint)
        form = words.form or (hinted.lower() if hinted else None)
        if form is not None:
            models = frozenset(m for m in models if self.form_factor.get(m) == form)
            if not models:
                return Unmapped.NOT_IN_GPUS_CSV
        memory = words.memory_gb or memory_gb
        models = frozenset(m for m in models if _memory_fits(self.memory_gb.get(m), memory))
        if not models:
            return Unmapped.MEMORY_MISMATCH
        if len(models) == 1:
            return Unmapped.NO_EXACT_SPELLING
        if len({self.form_factor.get(m) for m in models}) > 1:
            return Unmapped.AMBIGUOUS_FORM_FACTOR
        return Unmapped.AMBIGUOUS_MEMORY


@cache
def instance_gpus(reference_dir: Path = REFERENCE_DIR) -> dict[tuple[str, str], str]:
    """(provider, instance type) -> canonical GPU, as the provider's own documentation says."""
    with (reference_dir / "instance_gpus.csv").open(newline="", encoding="utf-8") as handle:
        return {
            (row["provider"], row["instance_type"]): row["gpu_model"]
            for row in csv.DictReader(handle)
        }


@cache
def gpu_catalog(reference_dir: Path = REFERENCE_DIR) -> GpuCatalog:
    return GpuCatalog.from_csv(reference_dir / "gpus.csv", instance_gpus(reference_dir))
