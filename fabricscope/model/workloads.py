"""Workloads by preset name or from a JSON file (presets live in fabricscope/model/presets/)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabricscope.files import read_json_input
from fabricscope.model.serving import ServingWorkload
from fabricscope.model.workload import Workload

PRESETS_FILE = Path(__file__).parent / "presets" / "workloads.json"
ARCHITECTURES_FILE = Path(__file__).parent / "presets" / "architectures.json"
# what a named architecture fixes: the model's shape (and its native context, a default the
# workload's own seq_len replaces); never the training plan (tokens, batch, precision...)
SHAPE_FIELDS = frozenset(
    {
        "params_billion",
        "active_params_billion",
        "layers",
        "hidden_size",
        "heads",
        "kv_heads",
        "head_dim",
        "ffn_size",
        "gated_mlp",
        "vocab_size",
        "tied_embeddings",
        "moe",
        "seq_len",
        "kv_lora_rank",
        "rope_head_dim",
        "mla_qk_head_dim",
        "mla_v_head_dim",
        "attention_window",
        "window_layer_fraction",
        "mamba",
        "mtp_layers",
        "mtp_shared_layer",
    }
)
# a workload's global batch: in tokens or in sequences, exactly one of them
BATCH_FIELDS = frozenset({"global_batch_tokens", "global_batch_size"})


class WorkloadError(ValueError):
    """An unknown preset or an invalid workload file; the message says which field."""


@cache
def presets() -> dict[str, dict[str, Any]]:
    entries = json.loads(PRESETS_FILE.read_text(encoding="utf-8"))
    return {entry["preset"]: entry for entry in entries}


@cache
def architectures() -> dict[str, dict[str, Any]]:
    """Named model shapes with their sources: architectures.json's, then every preset's own
    (a preset is an architecture and a training plan; its name names both)."""
    named: dict[str, dict[str, Any]] = {}
    for entry in json.loads(ARCHITECTURES_FILE.read_text(encoding="utf-8")):
        named[entry["architecture"]] = entry
    for name, entry in presets().items():
        if name in named:
            raise WorkloadError(f"{name!r} is both a preset and an architecture: one name each")
        fields = {k: v for k, v in entry["workload"].items() if k in SHAPE_FIELDS}
        named[name] = {
            "architecture": name,
            "description": entry["description"],
            "source": entry["source"],
            "fields": fields,
        }
    return named


def preset(name: str) -> Workload:
    entry = presets().get(name)
    if entry is None:
        raise WorkloadError(f"unknown workload preset {name!r}; presets: {', '.join(presets())}")
    return Workload(**entry["workload"])


def parse_workload(fields: dict[str, Any], origin: str) -> Workload:
    try:
        return Workload(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "workload"
        raise WorkloadError(f"{origin}: {where}: {error['msg']}") from None


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top``'s fields over ``base``'s; a nested object (``moe``, ``mamba``) merged field by
    field, so a file may give ``{"moe": {"expert_parallel": 64}}`` over an architecture's
    experts without restating them."""
    merged = {**base, **top}
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
    return merged


def load_workload(name_or_file: str) -> Workload:
    """A preset name, or a JSON file holding the Workload fields; a file with ``"preset"``
    starts from that preset (architecture and training plan) and changes only the fields it
    gives; a file with ``"architecture"`` takes the model's shape from :func:`architectures`
    and gives the training plan itself (tokens, batch...)."""
    if name_or_file in presets():
        return preset(name_or_file)
    path = Path(name_or_file)
    if not path.is_file():
        raise WorkloadError(
            f"{name_or_file!r} is neither a preset ({', '.join(presets())}) nor a file"
        )
    fields = read_json_input(path, WorkloadError)
    if not isinstance(fields, dict):
        raise WorkloadError(f"{path}: expected a JSON object of workload fields")
    base = fields.pop("preset", None)
    shape = fields.pop("architecture", None)
    if base is not None and shape is not None:
        raise WorkloadError(
            f"{path}: give preset (an architecture and a training plan) or architecture "
            "(the model's shape alone), not both"
        )
    if base is not None:
        # a named architecture: the preset's fields (with their sources), the file's on top
        known = presets()
        if not isinstance(base, str) or base not in known:
            raise WorkloadError(f"{path}: preset: {base!r} is not one of {', '.join(known)}")
        inherited = dict(known[base]["workload"])
        # the global batch is one quantity in two units: the file's, in either, replaces the
        # preset's (which would otherwise be refused as a second batch)
        if BATCH_FIELDS & fields.keys():
            for name in BATCH_FIELDS:
                inherited.pop(name, None)
        fields = _overlay({**inherited, "name": f"{base} ({path.stem})"}, fields)
    if shape is not None:
        # the model's shape from its source; the training plan is the file's to give
        named = architectures()
        if not isinstance(shape, str) or shape not in named:
            raise WorkloadError(
                f"{path}: architecture: {shape!r} is not one of {', '.join(sorted(named))}"
            )
        fields = _overlay({**named[shape]["fields"], "name": f"{shape} ({path.stem})"}, fields)
    fields.setdefault("name", path.stem)
    return parse_workload(fields, str(path))


# ---- serving workloads (fabricscope/model/serving.py): presets in presets/serving.json

SERVING_PRESETS_FILE = Path(__file__).parent / "presets" / "serving.json"


@cache
def serving_presets() -> dict[str, dict[str, Any]]:
    entries = json.loads(SERVING_PRESETS_FILE.read_text(encoding="utf-8"))
    return {entry["preset"]: entry for entry in entries}


def serving_architecture(shape: Any, context: int, origin: str) -> Workload:
    """A served model's shape as a Workload: a named architecture (:func:`architectures`)
    or an object of the shape fields, at ``context`` tokens. A Workload also holds a training
    plan; the serving model reads none of it, so it is set to one sequence."""
    if isinstance(shape, str):
        named = architectures()
        if shape not in named:
            raise WorkloadError(
                f"{origin}: architecture: {shape!r} is not one of {', '.join(sorted(named))}"
            )
        fields = dict(named[shape]["fields"])
        name = shape
    elif isinstance(shape, dict):
        unknown = sorted(set(shape) - SHAPE_FIELDS - {"name"})
        if unknown:
            raise WorkloadError(
                f"{origin}: architecture: {', '.join(unknown)} not a model shape field "
                f"(one of {', '.join(sorted(SHAPE_FIELDS))})"
            )
        fields = dict(shape)
        name = str(fields.pop("name", "model"))
    else:
        raise WorkloadError(f"{origin}: architecture: give a name or an object of shape fields")
    if fields.get("mamba") is not None:
        # its Mamba-2 layers hold an SSM state, not a KV cache; the serving model reads every
        # layer as attention
        raise WorkloadError(
            f"{origin}: architecture: {name!r} is a hybrid Mamba-Transformer, which the serving "
            "model does not cost (its Mamba-2 layers' state in place of a KV cache)"
        )
    plan = {"name": name, "seq_len": max(context, 1), "tokens": float(max(context, 1))}
    return parse_workload({**fields, **plan, "global_batch_size": 1}, f"{origin}: architecture")


def parse_serving(fields: dict[str, Any], origin: str) -> ServingWorkload:
    """A ServingWorkload from its fields, ``architecture`` a name or shape fields."""
    fields = dict(fields)
    shape = fields.pop("architecture", None)
    if shape is None:
        raise WorkloadError(f"{origin}: architecture: required (a name or shape fields)")
    try:
        context = int(fields.get("input_tokens", 1)) + int(fields.get("output_tokens", 1))
    except (TypeError, ValueError):
        context = 1
    arch = serving_architecture(shape, context, origin)
    fields.setdefault("name", arch.name)
    try:
        return ServingWorkload(**fields, architecture=arch)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "workload"
        raise WorkloadError(f"{origin}: {where}: {error['msg']}") from None


def load_serving_workload(name_or_file: str) -> ServingWorkload:
    """A serving preset, or a JSON file of ServingWorkload fields (``architecture``: a named
    architecture or the shape fields); a file with ``"preset"`` starts from that serving
    preset and changes only the fields it gives."""
    known = serving_presets()
    if name_or_file in known:
        return parse_serving(known[name_or_file]["workload"], f"preset {name_or_file}")
    path = Path(name_or_file)
    if not path.is_file():
        raise WorkloadError(
            f"{name_or_file!r} is neither a serving preset ({', '.join(known)}) nor a file"
        )
    fields = read_json_input(path, WorkloadError)
    if not isinstance(fields, dict):
        raise WorkloadError(f"{path}: expected a JSON object of serving workload fields")
    base = fields.pop("preset", None)
    if base is not None:
        if not isinstance(base, str) or base not in known:
            raise WorkloadError(f"{path}: preset: {base!r} is not one of {', '.join(known)}")
        fields = {**known[base]["workload"], "name": f"{base} ({path.stem})", **fields}
    fields.setdefault("name", path.stem)
    return parse_serving(fields, str(path))
