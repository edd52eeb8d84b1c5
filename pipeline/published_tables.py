"""NVIDIA's published Megatron-Bridge throughput tables as calibration cases the model was never
fitted on: a blind check of the constants fitted on fixtures/published_runs.

Only rows the model can represent become cases, each with the assumptions it needed; every
other row is skipped with its reason (FP4, a model without a named architecture, a cell
holding two measurements). Pure: reads the recorded CSV, no network.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from pipeline.model.scaling import LayoutGrid
from pipeline.model.workload import Precision, Workload
from pipeline.validation import CalibrationCase, SkippedRow
from pipeline.workloads import BATCH_FIELDS, presets

MEGATRON_BRIDGE = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "published_runs"
    / "megatron_bridge_performance_summary_archive.csv"
)
FAMILY = "megatron_bridge"

# the table's model names whose architecture a preset holds (with its source)
PRESET_OF = {"LLAMA3_8B": "llama3-8b", "LLAMA3_70B": "llama3-70b", "LLAMA3.1_405B": "llama3-405b"}


# The tables name a DGX system, never its network. The fabric is the system's reference design,
# an assumption each case records: DGX H100 and DGX B200 carry one 400 Gb/s ConnectX-7
# InfiniBand NIC per GPU; a DGX GB200 / GB300 is an NVL72 rack (72 GPUs in one NVLink domain,
# 4 per compute tray) with one 400 Gb/s ConnectX-7 (GB200) or 800 Gb/s ConnectX-8 (GB300) per GPU.
SYSTEMS: dict[str, dict[str, Any]] = {
    "DGX-H100": {"gpu_model": "H100-SXM-80GB", "gpus_per_node": 8, "fabric_gbps_per_gpu": 400},
    "DGX-B200": {"gpu_model": "B200-SXM-180GB", "gpus_per_node": 8, "fabric_gbps_per_gpu": 400},
    "DGX-GB200": {
        "gpu_model": "GB200-NVL-186GB",
        "gpus_per_node": 4,
        "nvlink_domain_gpus": 72,
        "fabric_gbps_per_gpu": 400,
    },
    "DGX-GB300": {
        "gpu_model": "GB300-NVL-288GB",
        "gpus_per_node": 4,
        "nvlink_domain_gpus": 72,
        "fabric_gbps_per_gpu": 800,
    },
}
SYSTEM_NOTE = (
    "fabric not stated by the table: the DGX reference design assumed (InfiniBand, "
    "{gbps} Gb/s per GPU{domain})"
)

# FP8 recipes the model represents as FP8 GEMMs (delayed and current scaling, MX blocks);
# NVFP4 is not modelled. 25.09 prints no precision.
PRECISIONS = {
    "FP8": Precision.FP8,
    "FP8-CS": Precision.FP8,
    "MXFP8": Precision.FP8,
    "FP8-MX": Precision.FP8,
    "BF16": Precision.BF16,
}


class _Skip(Exception):
    pass


def _int(row: dict[str, str], column: str) -> int | None:
    text = (row.get(column) or "").strip()
    if text in ("", "n/a", "-"):
        return None
    if not text.isdigit():
        raise _Skip(f"{column} {text!r} is not one number (two measurements in one cell?)")
    return int(text)


def _case(row: dict[str, str]) -> CalibrationCase:
    model = row["model_from_heading"] or row["model"]
    preset_name = PRESET_OF.get(model)
    if preset_name is None:
        raise _Skip(f"{model}: not mapped (only the dense Llama 3 rows are, by their presets)")
    cp = _int(row, "cp") or 1
    label = (row["precision"] or "").strip()
    if not label:
        raise _Skip("precision not printed (release 25.09)")
    if "(" in label:
        raise _Skip(f"precision {label}: two recipes' measurements in one cell")
    precision = PRECISIONS.get(label)
    if precision is None:
        raise _Skip(f"precision {label}: not modelled")
    system = row["system"] or row["system_from_heading"]
    if system not in SYSTEMS:
        raise _Skip(f"system {system}: its GPU's specs are incomplete in gpus.csv")
    n_gpus, tp, pp = _int(row, "num_gpus"), _int(row, "tp"), _int(row, "pp")
    gbs, mbs, seq = _int(row, "gbs"), _int(row, "mbs"), _int(row, "sequence_length")
    published = _int(row, "tokens_sec_gpu")
    if not (n_gpus and tp and pp and gbs and mbs and seq and published):
        raise _Skip("a layout, batch or throughput cell is empty")
    virtual = _int(row, "vp")
    fsdp = _int(row, "fsdp") or 0

    notes = [
        f"architecture from the {preset_name} preset (its source: "
        f"{presets()[preset_name]['source'].split(';')[0]})",
        f"precision {label} modelled as FP8 GEMMs" if precision is Precision.FP8 else "BF16",
        "activation recompute not stated: searched",
        "TP communication overlap not stated: not assumed",
    ]
    hardware = {**SYSTEMS[system], "gpu_count": n_gpus, "fabric_class": "infiniband"}
    domain = hardware.get("nvlink_domain_gpus")
    notes.append(
        SYSTEM_NOTE.format(
            gbps=hardware["fabric_gbps_per_gpu"],
            domain=f"; NVL72: {domain} GPUs per NVLink domain" if domain else "",
        )
    )
    if fsdp:
        notes.append(f"fsdp {fsdp}: ZeRO-3 (FSDP) over the data-parallel ranks")
    fields = dict(presets()[preset_name]["workload"])
    for name in BATCH_FIELDS:
        fields.pop(name, None)
    fields.update(
        name=f"{model} {system} {label} {n_gpus} GPUs",
        seq_len=seq,
        global_batch_size=gbs,
        micro_batch_size=mbs,
        precision=precision,
        zero_stage=3 if fsdp else fields.get("zero_stage", 1),
        tokens=1e12,  # time-to-train is not scored; step time does not depend on it
    )
    try:
        workload = Workload.model_validate(fields)
    except ValueError as exc:
        raise _Skip(f"workload invalid: {exc}") from None
    if n_gpus % (tp * pp * cp) or gbs % (n_gpus // (tp * pp * cp) * mbs):
        raise _Skip(f"tp x pp x cp {tp * pp * cp} and the batch do not divide {n_gpus} GPUs")
    return CalibrationCase(
        run_id=f"mbridge_{row['release']}_{model}_{system}_{label}_{n_gpus}gpu_r{row['row_index']}",
        family=FAMILY,
        workload=workload,
        hardware=hardware,
        layout=LayoutGrid.partial(workload, tp, pp, mbs, None, virtual, cp=cp),
        published_tokens_per_s_per_gpu=float(published),
        assumptions=tuple(notes),
    )


def megatron_bridge_cases(
    path: Path = MEGATRON_BRIDGE,
) -> tuple[list[CalibrationCase], list[SkippedRow]]:
    """The pre-training rows as cases; every other row skipped with its reason."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases: list[CalibrationCase] = []
    skipped: list[SkippedRow] = []
    for row in rows:
        run_id = f"{row['release']} {row['model_from_heading'] or row['model']} {row['system']}"
        if not row["section"].startswith("Pre-Training"):
            skipped.append(SkippedRow(run_id, f"{row['section']}: fine-tuning is not scored"))
            continue
        try:
            cases.append(_case(row))
        except _Skip as skip:
            skipped.append(SkippedRow(run_id, str(skip)))
    assert all(math.isfinite(c.published_tokens_per_s_per_gpu) for c in cases)
    return cases, skipped
