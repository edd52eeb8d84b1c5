"""Reference data for the model (GPU specs, fabric classes) and hardware profiles from rows."""

from __future__ import annotations

import csv
import difflib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from fabricscope.model.hardware import (
    FabricClassParams,
    GpuSpec,
    HardwareError,
    HardwareProfiles,
    build_profiles,
)
from fabricscope.warehouse.gpus import REFERENCE_DIR, gpu_catalog


def _rows(name: str, reference_dir: Path) -> list[dict[str, str]]:
    with (reference_dir / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _number(value: str) -> float | None:
    return float(value) if value.strip() else None


@cache
def gpu_specs(reference_dir: Path = REFERENCE_DIR) -> dict[str, GpuSpec]:
    """GPUs whose compute, memory and links are all known (others cannot be modelled), each
    with its measured matmul ceilings where gemm_ceilings.csv has them."""
    ceilings = {
        (row["gpu_model"], row["precision"]): float(row["mamf_tflops"])
        for row in _rows("gemm_ceilings", reference_dir)
    }
    specs: dict[str, GpuSpec] = {}
    for row in _rows("gpus", reference_dir):
        needed = [
            _number(row[c])
            for c in ("bf16_dense_tflops", "memory_gb", "hbm_tbps", "scaleup_gbps_per_gpu")
        ]
        if any(v is None for v in needed):
            continue
        bf16, memory, hbm, scaleup = (float(v) for v in needed if v is not None)
        model = row["gpu_model"]
        specs[model] = GpuSpec(
            bf16,
            _number(row["fp8_dense_tflops"]),
            memory,
            hbm,
            scaleup,
            bf16_mamf_tflops=ceilings.get((model, "bf16")),
            fp8_mamf_tflops=ceilings.get((model, "fp8")),
            fp4_dense_tflops=_number(row["fp4_dense_tflops"]),
        )
    return specs


@cache
def fabric_classes(reference_dir: Path = REFERENCE_DIR) -> dict[str, FabricClassParams]:
    classes: dict[str, FabricClassParams] = {}
    for row in _rows("fabric_classes", reference_dir):
        if not row["eta_small_scale"]:
            continue  # "none": no inter-node fabric to model
        classes[row["fabric_class"]] = FabricClassParams(
            latency_us=float(row["latency_us"]),
            alpha_multiplier=float(row["alpha_multiplier"]),
            eta_small_scale=float(row["eta_small_scale"]),
            knee_nodes=float(row["knee_nodes"]),
            kappa_per_doubling=float(row["kappa_per_doubling"]),
            phi_floor=float(row["phi_floor"]),
        )
    return classes


def resolve_gpu(name: str) -> str:
    """The canonical id for a GPU name or alias; a clear error listing close names."""
    model = gpu_catalog().canonical(name)
    if model is not None:
        return model
    spellings = sorted(set(gpu_catalog().by_key.values()))
    close = difflib.get_close_matches(name.upper(), spellings, n=5, cutoff=0.4)
    hint = f"; close names: {', '.join(close)}" if close else ""
    raise HardwareError(f"unknown GPU {name!r} (not a canonical id nor an alias in gpus.csv){hint}")


def profiles(
    rows: Sequence[Mapping[str, Any]],
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> HardwareProfiles:
    """Hardware profiles from rows naming GPUs by canonical id or alias.

    A row with a ``provider`` whose (provider, fabric class) has a stored multi-node
    all-reduce calibration uses the measured bandwidth instead of the class default, and its
    measured latency where the run has the reference shape (``latency_multiplier``).
    """
    return build(with_calibrations(rows, calibrations))


def build(resolved_rows: Sequence[Mapping[str, Any]]) -> HardwareProfiles:
    """Profiles from rows already passed through :func:`with_calibrations`."""
    return build_profiles(resolved_rows, gpu_specs(), fabric_classes())


def with_calibrations(
    rows: Sequence[Mapping[str, Any]],
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The rows with canonical GPU ids, and measured fabric figures where one applies."""
    specs = gpu_specs()
    resolved = []
    for row in rows:
        model = resolve_gpu(str(row.get("gpu_model", "")))
        if model not in specs:
            raise HardwareError(f"GPU {model}: its specs are incomplete in gpus.csv")
        out = {**row, "gpu_model": model, "fabric_source": "class default"}
        found = (calibrations or {}).get((str(row.get("provider")), str(row.get("fabric_class"))))
        if found and "measured_busbw_gbytes_s" not in row:
            out["measured_busbw_gbytes_s"] = found["busbw_gbytes_s"]
            out["measured_nodes"] = found["n_nodes"]
            out["measured_alpha_us"] = found.get("alpha_us")
            out["measured_ranks"] = found.get("n_ranks")
            out["fabric_source"] = f"calibration {found['calibration_id']}"
        elif "measured_busbw_gbytes_s" in row:
            out["fabric_source"] = "measured (hardware file)"
        resolved.append(out)
    return resolved
