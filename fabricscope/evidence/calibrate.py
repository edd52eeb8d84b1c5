"""Uploaded nccl-tests output: parse, fit, store; and the stored fits for the model."""

from __future__ import annotations

import hashlib
import math
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fabricscope.model.calibration import (
    AlphaBetaFit,
    CalibrationError,
    NcclTestResult,
    fit_alpha_beta,
    parse_nccl_tests,
)
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import WarehouseError, read_frame
from fabricscope.warehouse.load import publish_calibration
from fabricscope.warehouse.models import FabricClass, utc_now

MAX_UPLOAD_BYTES = 5_000_000
# the largest training clusters run some tens of thousands of nodes
MAX_NODES = 100_000


@dataclass(frozen=True)
class Calibration:
    calibration_id: str
    provider: str
    fabric_class: str
    result: NcclTestResult
    fit: AlphaBetaFit
    n_nodes: int | None
    gpus_per_node: int | None


# No link in the field carries more than this bus bandwidth per rank (NVLink 5: 900 GB/s
# each way); a fit above it comes from a damaged or made-up output.
MAX_BUSBW_GBYTES_S = 10_000.0
# ...and none carries less than 10 MB/s (1 GbE moves 0.125 GB/s); a collective's start-up
# latency is microseconds to milliseconds, never a second
MIN_BUSBW_GBYTES_S = 0.01
MAX_ALPHA_US = 1e6


def fit_upload(
    text: str,
    provider: str,
    fabric_class: str,
    collective: str | None = None,
    n_nodes: int | None = None,
) -> Calibration:
    """Parse and fit one nccl-tests output; raises CalibrationError with a clear message."""
    if len(text.encode()) > MAX_UPLOAD_BYTES:
        raise CalibrationError(f"the upload is larger than {MAX_UPLOAD_BYTES // 1_000_000} MB")
    if not provider.strip():
        raise CalibrationError("say which provider measured this (--provider)")
    if fabric_class not in {c.value for c in FabricClass} - {"unknown", "none"}:
        raise CalibrationError(f"fabric class {fabric_class!r} is not one the model knows")
    if n_nodes is not None and n_nodes < 1:
        raise CalibrationError(f"a run has at least 1 node (got --nodes {n_nodes})")
    if n_nodes is not None and n_nodes > MAX_NODES:
        raise CalibrationError(f"a run has at most {MAX_NODES:,} nodes (got --nodes {n_nodes:,})")
    # a damaged table (sizes near int64's end) overflows in the fit: the result is
    # refused below in one line, without numpy's warning before it
    with np.errstate(all="ignore"):
        result = parse_nccl_tests(text, collective=collective)
        fit = fit_alpha_beta(result)
    _check_nodes(n_nodes, result)
    if not (math.isfinite(fit.busbw_gbytes_s) and 0 < fit.busbw_gbytes_s <= MAX_BUSBW_GBYTES_S):
        raise CalibrationError(
            f"a bus bandwidth of {fit.busbw_gbytes_s:g} GB/s is not a measurement (no fabric "
            f"or NVLink domain reaches {MAX_BUSBW_GBYTES_S:g} GB/s): check the output"
        )
    if fit.busbw_gbytes_s < MIN_BUSBW_GBYTES_S:
        raise CalibrationError(
            f"a bus bandwidth of {fit.busbw_gbytes_s:g} GB/s is not a measurement (slower than "
            f"any fabric, {MIN_BUSBW_GBYTES_S:g} GB/s): check the output's times"
        )
    if fit.alpha_us is not None and not (
        math.isnan(fit.alpha_us) or abs(fit.alpha_us) <= MAX_ALPHA_US
    ):
        raise CalibrationError(
            f"a latency of {fit.alpha_us:g} us is not a measurement (a collective starts in "
            f"well under {MAX_ALPHA_US / 1e6:g} s): check the output's times"
        )
    nodes = n_nodes or result.n_nodes
    ranks = result.n_ranks
    per_node = ranks // nodes if ranks and nodes and ranks % nodes == 0 else None
    return Calibration(
        f"{provider}-{utc_now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}",
        provider,
        fabric_class,
        result,
        fit,
        nodes,
        per_node,
    )


def _check_nodes(n_nodes: int | None, result: NcclTestResult) -> None:
    """--nodes against the run's own ranks and hosts: a 16-rank run is not a billion nodes."""
    if n_nodes is None:
        return
    ranks = result.n_ranks
    if ranks is not None and (n_nodes > ranks or ranks % n_nodes):
        raise CalibrationError(
            f"--nodes {n_nodes:,} does not fit the run's {ranks} ranks: the nodes must divide "
            "the ranks evenly (the same GPUs on each node)"
        )
    if result.n_nodes is not None and n_nodes != result.n_nodes:
        raise CalibrationError(
            f"--nodes {n_nodes:,} but the output's rank lines list {result.n_nodes} hosts; "
            "leave --nodes out or correct it"
        )


def store(
    warehouse: Path, calibration: Calibration, text: str, file_name: str, note: str | None = None
) -> None:
    fit, result = calibration.fit, calibration.result
    publish_calibration(
        warehouse,
        {
            "calibration_id": calibration.calibration_id,
            "provider": calibration.provider,
            "fabric_class": calibration.fabric_class,
            "collective": result.collective.value,
            "n_ranks": result.n_ranks,
            "n_nodes": calibration.n_nodes,
            "gpus_per_node": calibration.gpus_per_node,
            "alpha_us": fit.alpha_us,
            "busbw_gbytes_s": fit.busbw_gbytes_s,
            "fitted_from_bytes": fit.busbw_size_range_bytes[0],
            "fitted_to_bytes": fit.busbw_size_range_bytes[1],
            "file_name": file_name,
            "file_sha256": hashlib.sha256(text.encode()).hexdigest(),
            "raw_text": text,
            "note": note,
            "uploaded_at": utc_now(),
        },
    )


ALL_REDUCE_SQL = reads.sql("all_reduce_calibrations")


def all_reduce_by_provider(frame: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """Rows of ``ALL_REDUCE_SQL`` keyed by (provider, fabric class)."""
    return {(r["provider"], r["fabric_class"]): dict(r) for r in frame.to_dict("records")}


def stored_all_reduce(warehouse: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The current multi-node all-reduce calibration per (provider, fabric class)."""
    if not warehouse.exists():
        return {}
    try:
        _, frame = read_frame(warehouse, ALL_REDUCE_SQL)
    except WarehouseError:
        return {}
    return all_reduce_by_provider(frame)
