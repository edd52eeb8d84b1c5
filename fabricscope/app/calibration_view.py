"""Uploaded nccl-tests output for the Calibrate page: fit it, table it, compare it with the
fabric class default the model would use otherwise. Pure apart from ``store_upload``, which
writes a snapshot through the same code path as ``fabricscope calibrate``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fabricscope.config import load_settings
from fabricscope.evidence import calibrate
from fabricscope.model.calibration import CalibrationError, Collective, NcclTestResult
from fabricscope.model.hardware import (
    REFERENCE_ALPHA_US,
    REFERENCE_NODES,
    REFERENCE_RANKS,
    fabric_efficiency,
    latency_multiplier,
    reference_shape,
)
from fabricscope.model.scaling import ModelConstants
from fabricscope.rank import catalog
from fabricscope.warehouse.models import FabricClass

# classes a measurement can belong to (a run across nodes had some fabric)
CALIBRATION_CLASSES = tuple(c.value for c in FabricClass if c.value not in ("unknown", "none"))
COLLECTIVES = tuple(c.value for c in Collective)
# the GPU does not enter the fabric terms; any GPU with complete specs builds the profile
_REFERENCE_GPU = "H100-SXM-80GB"


@dataclass(frozen=True)
class Upload:
    file_name: str
    text: str
    calibration: calibrate.Calibration

    @property
    def used_by_model(self) -> bool:
        """The model reads multi-node all-reduce calibrations (fabricscope.evidence.calibrate)."""
        result = self.calibration.result
        nodes = self.calibration.n_nodes
        return result.collective is Collective.ALL_REDUCE and nodes is not None and nodes > 1

    @property
    def latency_multiplier(self) -> float | None:
        """Measured latency over InfiniBand's at the reference shape, if the model reads it."""
        if not self.used_by_model:
            return None
        calibration = self.calibration
        return latency_multiplier(
            calibration.fit.alpha_us, calibration.result.n_ranks, calibration.n_nodes
        )


def fit_upload(
    data: bytes,
    file_name: str,
    provider: str,
    fabric_class: str,
    collective: str | None = None,
    nodes: int | None = None,
) -> Upload:
    """Decode (as the CLI does) and fit; CalibrationError names the line or input at fault."""
    if not data.strip():
        raise CalibrationError(f"{file_name} is empty")
    text = data.decode("utf-8", errors="replace")
    try:
        fitted = calibrate.fit_upload(text, provider, fabric_class, collective, nodes)
    except CalibrationError as exc:
        raise CalibrationError(f"{file_name}: {exc}") from None
    return Upload(file_name, text, fitted)


def store_upload(warehouse: Path, upload: Upload, note: str | None) -> None:
    """Publish the calibration as a new snapshot (ConfigError if the folder is read-only)."""
    load_settings().require_writable()
    calibrate.store(warehouse, upload.calibration, upload.text, upload.file_name, note or None)


def parsed_table(result: NcclTestResult) -> pd.DataFrame:
    """The result table as parsed: sizes in bytes, times in µs, bandwidths in GB/s."""
    return pd.DataFrame(
        {
            "size_bytes": result.size_bytes,
            "count": result.count_elements,
            "time_us_out_of_place": result.time_us_out,
            "algbw_gbytes_s_out": result.algbw_out,
            "busbw_gbytes_s_out": result.busbw_out,
            "time_us_in_place": result.time_us_in,
            "algbw_gbytes_s_in": result.algbw_in,
            "busbw_gbytes_s_in": result.busbw_in,
        }
    )


def fit_summary(upload: Upload) -> pd.DataFrame:
    fitted, result = upload.calibration.fit, upload.calibration.result
    rows = [
        ("collective", result.collective.value, "from the output or as given"),
        ("ranks", result.n_ranks, f"read from {result.n_ranks_source or 'nothing'}"),
        ("nodes", upload.calibration.n_nodes, "from host names or as given"),
        ("GPUs per node", upload.calibration.gpus_per_node, "ranks / nodes"),
        (
            "latency alpha (µs)",
            None if fitted.alpha_us is None else round(fitted.alpha_us, 2),
            f"fitted on sizes {_span(fitted.alpha_size_range_bytes)} bytes",
        ),
        (
            "bus bandwidth (GB/s)",
            round(float(fitted.busbw_gbytes_s), 2),
            f"plateau fitted on sizes {_span(fitted.busbw_size_range_bytes)} bytes",
        ),
        ("fit error (RMS, relative)", round(fitted.residual_rms_rel, 4), "bandwidth line"),
    ]
    return pd.DataFrame(
        [(name, None if value is None else str(value), note) for name, value, note in rows],
        columns=["quantity", "value", "note"],
    )


def _span(sizes: tuple[int, int] | None) -> str:
    return "n/a" if sizes is None else f"{sizes[0]:,}-{sizes[1]:,}"


def class_comparison(upload: Upload, nic_gbps_per_gpu: float) -> pd.DataFrame:
    """The fit beside the class default at the run's size: latency, bus bandwidth and share of
    line rate (the model's ``eta x phi(nodes)``), and what the model uses once it is stored."""
    calibration = upload.calibration
    params = catalog.fabric_classes()[calibration.fabric_class]
    fitted = calibration.fit
    step_us = ModelConstants().network_step_latency_s * 1e6
    measured_multiplier = upload.latency_multiplier
    at_reference = reference_shape(calibration.result.n_ranks, calibration.n_nodes)
    class_alpha = REFERENCE_ALPHA_US * params.alpha_multiplier if at_reference else None
    used_multiplier = (
        params.alpha_multiplier if measured_multiplier is None else measured_multiplier
    )
    rows: list[tuple[str, float | None, float | None, float | None, str]] = [
        (
            "all-reduce latency alpha (µs)",
            fitted.alpha_us,
            class_alpha,
            None if class_alpha is None else REFERENCE_ALPHA_US * used_multiplier,
            f"class: InfiniBand's measured {REFERENCE_ALPHA_US:g} µs on {REFERENCE_NODES} nodes "
            f"x {REFERENCE_RANKS // REFERENCE_NODES} GPUs times the class's multiplier; only "
            "that shape is compared",
        ),
        (
            "network step latency (µs)",
            None if measured_multiplier is None else step_us * measured_multiplier,
            step_us * params.alpha_multiplier,
            step_us * used_multiplier,
            "NCCL's ring step latency over InfiniBand times the class's multiplier, or times "
            "measured alpha / InfiniBand's when the run has the reference shape"
            + ("" if measured_multiplier is not None else " (this one does not: class used)"),
        ),
    ]
    nodes, per_node = calibration.n_nodes, calibration.gpus_per_node
    if nodes and per_node and nodes > 1 and nic_gbps_per_gpu > 0:
        line_rate = per_node * nic_gbps_per_gpu / 8  # GB/s a node's NICs carry
        base = {
            "gpu_model": _REFERENCE_GPU,
            "gpu_count": nodes * per_node,
            "gpus_per_node": per_node,
            "fabric_class": calibration.fabric_class,
            "fabric_gbps_per_gpu": nic_gbps_per_gpu,
        }
        measured = {
            **base,
            "measured_busbw_gbytes_s": float(fitted.busbw_gbytes_s),
            "measured_nodes": nodes,
        }
        default_share, used_share = (
            float(fabric_efficiency(profiles, profiles.nodes)[0])
            for profiles in (catalog.build([base]), catalog.build([measured]))
        )
        if not upload.used_by_model:
            used_share = default_share
        rows += [
            (
                f"bus bandwidth over {nodes} nodes (GB/s)",
                float(fitted.busbw_gbytes_s),
                default_share * line_rate,
                used_share * line_rate,
                f"class: {per_node} GPUs x {nic_gbps_per_gpu:g} Gb/s x eta x phi(nodes); the "
                "model caps a measurement at line rate",
            ),
            (
                "share of NIC line rate",
                float(fitted.busbw_gbytes_s) / line_rate,
                default_share,
                used_share,
                "eta x phi(nodes) in docs/MODEL.md",
            ),
        ]
    frame = pd.DataFrame(
        rows, columns=["quantity", "measured", "class default", "model uses", "note"]
    )
    return frame.replace({np.nan: None})
