"""Hardware profiles as arrays: one entry per distinct GPU / node / fabric combination.

Units: peak throughput in FLOP/s, memory in bytes, bandwidths in bytes/s **per GPU,
unidirectional** (vendors quote NVLink bidirectional: halved here; NICs in Gb/s:
divided by 8), latencies in seconds. Pure: built from plain numbers, no I/O.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fabricscope.model.generations import generation_of

# A GPU's "80 GB" is 80 GiB as the driver counts it (nvidia-smi: A100 40GB 40,960 MiB,
# A100 80GB 81,920 MiB, H100 80GB 81,559 MiB); memory is compared and reported in GiB
GIB = float(2**30)

Array = NDArray[np.float64]

# The latency a measured one is compared with: nccl-tests all_reduce_perf over InfiniBand on
# 2 nodes x 8 GPUs (fixtures/nccl_tests/infiniband_2n_16g_all_reduce.txt), its small-message
# alpha as fabricscope.model.calibration.fit_alpha_beta fits it (30.5 µs). A fabric class's alpha
# multiplier is its per-step latency over InfiniBand's, so a run of the same shape measured on
# another fabric gives that fabric's multiplier as measured alpha / this one.
REFERENCE_ALPHA_US = 30.5
# The share of its BF16 peak an A100 SXM's matmuls reach (271.2 of 312 TFLOP/s, measured:
# fabricscope/warehouse/reference/gemm_ceilings.csv). The model's compute efficiency is fitted as an
# A100's; another GPU's scales by its own measured ceiling over this one, and a GPU or
# precision without a measurement is taken to reach this share (docs/MODEL.md says so).
REFERENCE_GEMM_CEILING = 271.2 / 312.0
REFERENCE_RANKS = 16
REFERENCE_NODES = 2

# A hardware row's optional ``intra_node``: the link between a node's GPUs when it is not the
# GPU's own (gpus.csv scaleup_gbps_per_gpu), as a name or GB/s. Bidirectional per GPU as
# vendors quote them and gpus.csv holds them: PCIe x16 Gen3/4/5 32/64/128 GB/s; NVLink on
# HGX boards, gen 2 (V100) 300, gen 3 (A100) 600, gen 4 (H100) 900, gen 5 (B200) 1,800 GB/s.
INTRA_NODE_LINKS: dict[str, float] = {
    "pcie3": 32.0,
    "pcie4": 64.0,
    "pcie5": 128.0,
    "nvlink2": 300.0,
    "nvlink3": 600.0,
    "nvlink4": 900.0,
    "nvlink5": 1800.0,
}
# the fields a hardware row may carry (a hardware file's keys; anything else is refused)
HARDWARE_FIELDS = (
    "gpu_model",
    "gpu_count",
    "gpus_per_node",
    "fabric_class",
    "fabric_gbps_per_gpu",
    "provider",
    "intra_node",
    "nvlink_domain_gpus",
    "oversubscription",
    "measured_busbw_gbytes_s",
    "measured_nodes",
    "measured_alpha_us",
    "measured_ranks",
)


class HardwareError(ValueError):
    """A hardware profile that cannot be modelled; the message names the field."""


@dataclass(frozen=True)
class FabricClassParams:
    """One row of fabricscope/warehouse/reference/fabric_classes.csv (its README: sources)."""

    latency_us: float
    alpha_multiplier: float
    eta_small_scale: float
    knee_nodes: float
    kappa_per_doubling: float
    phi_floor: float


@dataclass(frozen=True)
class GpuSpec:
    """One row of fabricscope/warehouse/reference/gpus.csv: dense peaks and memory."""

    bf16_dense_tflops: float
    fp8_dense_tflops: float | None
    memory_gb: float
    hbm_tbps: float
    scaleup_gbps_per_gpu: float  # GB/s, bidirectional aggregate as vendors quote it
    # measured matmul ceilings (gemm_ceilings.csv), TFLOP/s; None where none was measured
    bf16_mamf_tflops: float | None = None
    fp8_mamf_tflops: float | None = None
    # the FP4 tensor cores' dense peak (NVFP4, AMD's MXFP4); None where the GPU has none or
    # no source read states it
    fp4_dense_tflops: float | None = None

    @property
    def gemm_ceiling_bf16(self) -> float:
        """The share of the BF16 peak the GPU's matmuls reach; the reference's if unmeasured."""
        if self.bf16_mamf_tflops is None:
            return REFERENCE_GEMM_CEILING
        return self.bf16_mamf_tflops / self.bf16_dense_tflops

    @property
    def gemm_ceiling_fp8(self) -> float:
        """The share of the FP8 peak its FP8 matmuls reach; its BF16 share if unmeasured."""
        if self.fp8_mamf_tflops is None or not self.fp8_dense_tflops:
            return self.gemm_ceiling_bf16
        return self.fp8_mamf_tflops / self.fp8_dense_tflops


@dataclass(frozen=True)
class HardwareProfiles:
    """Struct of arrays, all of the same length (one entry per profile)."""

    gpu_count: Array
    gpus_per_node: Array
    nvlink_domain_gpus: Array  # GPUs sharing one NVLink domain (8, or 72 for NVL72)
    peak_bf16: Array  # FLOP/s per GPU, dense
    peak_fp8: Array  # FLOP/s per GPU, dense (bf16 peak where the GPU has no FP8)
    # FLOP/s per GPU, dense, of FP4 weights and activations on FP4 tensor cores; peak_fp8 where
    # gpus.csv has no FP4 figure, so FP4 weights there run as they did before the column
    peak_fp4: Array
    gemm_ceiling_bf16: Array  # share of peak_bf16 its matmuls reach (GpuSpec's)
    gemm_ceiling_fp8: Array  # share of peak_fp8 its FP8 matmuls reach (BF16's without FP8)
    # 1.0 for an NVIDIA Blackwell GPU (generations.py), else 0.0 (a GPU without a generation
    # there too): the FP8 recipes' measured factors are per generation
    blackwell: Array
    hbm_bytes: Array
    hbm_bytes_per_s: Array
    scaleup_bytes_per_s: Array  # unidirectional per GPU
    nic_bytes_per_s: Array  # unidirectional per GPU; 0 for single-node-only hardware
    fabric_alpha_multiplier: Array  # per-step latency over InfiniBand's (class or measured)
    fabric_eta: Array
    fabric_knee_nodes: Array
    fabric_kappa: Array
    fabric_floor: Array
    oversubscription: Array

    def __len__(self) -> int:
        return len(self.gpu_count)

    @property
    def nodes(self) -> Array:
        return np.ceil(self.gpu_count / self.gpus_per_node)

    def take(self, index: NDArray[np.intp]) -> HardwareProfiles:
        return HardwareProfiles(**{f.name: getattr(self, f.name)[index] for f in fields(self)})


def build_profiles(
    rows: Sequence[Mapping[str, Any]],
    gpus: Mapping[str, GpuSpec],
    fabric_classes: Mapping[str, FabricClassParams],
) -> HardwareProfiles:
    """Profiles from plain rows: gpu_model, gpu_count, gpus_per_node, fabric_class,
    fabric_gbps_per_gpu, and optionally nvlink_domain_gpus, oversubscription and a
    measurement (measured_busbw_gbytes_s of an all-reduce over measured_nodes whole nodes)
    that replaces the class's small-scale efficiency.

    A measurement may also carry measured_alpha_us (the all-reduce's fitted small-message
    latency) and measured_ranks; when its shape is the reference's (2 nodes, 16 ranks) it
    replaces the class's alpha multiplier (see :func:`latency_multiplier`).

    A single-node profile may use fabric_class "none" (its collectives never leave the node).
    """
    columns: dict[str, list[float]] = {f.name: [] for f in fields(HardwareProfiles)}
    for number, row in enumerate(rows, start=1):
        where = f"hardware profile {number} ({row.get('gpu_model')!r})"
        spec = gpus.get(str(row.get("gpu_model")))
        if spec is None:
            raise HardwareError(f"{where}: unknown gpu_model")
        count, per_node = _positive(row, "gpu_count", where), _positive(row, "gpus_per_node", where)
        if (count >= per_node and count % per_node) or (count < per_node and per_node % count):
            raise HardwareError(
                f"{where}: gpu_count {count:g} is not a whole number of {per_node:g}-GPU nodes "
                "(nor a part of one node that divides it)"
            )
        fabric_name = str(row.get("fabric_class") or "")
        fabric = fabric_classes.get(fabric_name)
        multi_node = count > per_node
        if fabric is None and (multi_node or fabric_name not in ("", "none")):
            raise HardwareError(
                f"{where}: fabric_class {fabric_name!r} is not one of "
                f"{', '.join(sorted(fabric_classes))}"
            )
        nic_gbps = float(row.get("fabric_gbps_per_gpu") or 0)
        if multi_node and nic_gbps <= 0:
            raise HardwareError(f"{where}: a multi-node profile needs fabric_gbps_per_gpu > 0")
        eta = fabric.eta_small_scale if fabric else 1.0
        measured = float(row.get("measured_busbw_gbytes_s") or 0)
        if measured and fabric and nic_gbps > 0:
            # an all-reduce over whole nodes measured by nccl-tests: its busbw is
            # k x NIC x eta x phi(n) with k = GPUs per node; solve for eta at the measured
            # node count, capped at line rate (NVLS/tree runs over 2 nodes can exceed a ring)
            nodes = float(row.get("measured_nodes") or 2)
            ratio = max(nodes / fabric.knee_nodes, 1.0)
            phi = max(fabric.phi_floor, 1.0 - fabric.kappa_per_doubling * math.log2(ratio))
            eta = min(1.0, measured / (per_node * nic_gbps / 8) / phi)
        alpha_multiplier = fabric.alpha_multiplier if fabric else 1.0
        measured_alpha = latency_multiplier(
            row.get("measured_alpha_us"), row.get("measured_ranks"), row.get("measured_nodes")
        )
        if measured_alpha is not None and fabric:
            alpha_multiplier = measured_alpha
        scaleup = _intra_node(row.get("intra_node"), spec, where)
        domain = float(row.get("nvlink_domain_gpus") or per_node)
        over = float(row.get("oversubscription") or 1.0)
        if over < 1:
            raise HardwareError(f"{where}: oversubscription must be >= 1 (got {over:g})")
        values = {
            "gpu_count": count,
            "gpus_per_node": per_node,
            "nvlink_domain_gpus": domain,
            "peak_bf16": spec.bf16_dense_tflops * 1e12,
            "peak_fp8": (spec.fp8_dense_tflops or spec.bf16_dense_tflops) * 1e12,
            "peak_fp4": (spec.fp4_dense_tflops or spec.fp8_dense_tflops or spec.bf16_dense_tflops)
            * 1e12,
            "gemm_ceiling_bf16": spec.gemm_ceiling_bf16,
            "gemm_ceiling_fp8": spec.gemm_ceiling_fp8,
            "blackwell": float(generation_of(str(row.get("gpu_model"))) == "blackwell"),
            "hbm_bytes": spec.memory_gb * GIB,
            "hbm_bytes_per_s": spec.hbm_tbps * 1e12,
            "scaleup_bytes_per_s": scaleup * 1e9 / 2,
            "nic_bytes_per_s": nic_gbps * 1e9 / 8,
            "fabric_alpha_multiplier": alpha_multiplier,
            "fabric_eta": eta,
            "fabric_knee_nodes": fabric.knee_nodes if fabric else 1.0,
            "fabric_kappa": fabric.kappa_per_doubling if fabric else 0.0,
            "fabric_floor": fabric.phi_floor if fabric else 1.0,
            "oversubscription": over,
        }
        for name, value in values.items():
            columns[name].append(float(value))
    return HardwareProfiles(
        **{name: np.asarray(v, dtype=np.float64) for name, v in columns.items()}
    )


def _intra_node(value: Any, spec: GpuSpec, where: str) -> float:
    """GB/s per GPU, bidirectional: the GPU's own scale-up link unless ``value`` names one."""
    if value is None or value == "":
        return spec.scaleup_gbps_per_gpu
    if isinstance(value, str) and value.strip().lower() in INTRA_NODE_LINKS:
        return INTRA_NODE_LINKS[value.strip().lower()]
    try:
        gbps = float(value)
    except (TypeError, ValueError):
        raise HardwareError(
            f"{where}: intra_node {value!r} is neither a link "
            f"({', '.join(INTRA_NODE_LINKS)}) nor GB/s per GPU"
        ) from None
    if not math.isfinite(gbps) or gbps <= 0:
        raise HardwareError(f"{where}: intra_node must be a positive GB/s figure (got {value!r})")
    return gbps


# Numeric hardware fields: (smallest allowed, largest plausible, whole number?). Zero Gb/s is
# "no fabric"; everything else counts something that exists.
NUMERIC_FIELDS: dict[str, tuple[float, float, bool]] = {
    "gpu_count": (1, 1_000_000, True),
    "gpus_per_node": (1, 1_024, True),
    "fabric_gbps_per_gpu": (0, 100_000, False),
    "nvlink_domain_gpus": (1, 100_000, True),
    "oversubscription": (1, 64, False),
    "measured_busbw_gbytes_s": (1e-6, 10_000, False),
    "measured_nodes": (1, 1_000_000, True),
    "measured_alpha_us": (1e-3, 1e7, False),
    "measured_ranks": (1, 10_000_000, True),
}


def check_fields(row: Mapping[str, Any], where: str) -> None:
    """Refuse a hardware row with a field the model does not know (a typo would be ignored),
    or a number that is not one: NaN, infinite, negative, fractional counts, implausible."""
    unknown = [name for name in row if name not in HARDWARE_FIELDS]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, HARDWARE_FIELDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise HardwareError(
            f"{where}: unknown field {name!r}{hint}; known: {', '.join(HARDWARE_FIELDS)}"
        )
    for name, (low, high, whole) in NUMERIC_FIELDS.items():
        value = row.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise HardwareError(f"{where}: {name} must be a number (got {value!r})")
        if not math.isfinite(value) or not low <= value <= high:
            raise HardwareError(
                f"{where}: {name} must lie between {low:g} and {high:g} (got {value!r})"
            )
        if whole and value != int(value):
            raise HardwareError(f"{where}: {name} must be a whole number (got {value!r})")


def latency_multiplier(alpha_us: Any, ranks: Any, nodes: Any) -> float | None:
    """A measured all-reduce latency as a multiplier on InfiniBand's per-step latency.

    ``alpha_us / REFERENCE_ALPHA_US`` when the run has the reference's shape (2 nodes,
    16 ranks); None otherwise, or when the run has no latency-bound sizes to fit alpha on.
    Other shapes are not scaled: small-message all-reduce latency depends on NCCL's choice of
    algorithm and protocol at each size, which this model does not reproduce.
    """
    try:
        alpha, n_ranks, n_nodes = float(alpha_us), int(ranks), int(nodes)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(alpha) or alpha <= 0 or not reference_shape(n_ranks, n_nodes):
        return None
    return alpha / REFERENCE_ALPHA_US


def reference_shape(ranks: int | None, nodes: int | None) -> bool:
    """Whether an nccl-tests run has the shape of the reference latency's run."""
    return (ranks, nodes) == (REFERENCE_RANKS, REFERENCE_NODES)


def _positive(row: Mapping[str, Any], name: str, where: str) -> float:
    try:
        value = float(row[name])
    except (KeyError, TypeError, ValueError):
        raise HardwareError(f"{where}: {name} is missing or not a number") from None
    if value <= 0 or value != int(value):
        raise HardwareError(f"{where}: {name} must be a positive whole number (got {value:g})")
    return value


def fabric_efficiency(profiles: HardwareProfiles, nodes: Array) -> Array:
    """Share of NIC line rate a collective's bus bandwidth reaches across ``nodes`` nodes.

    ``eta * phi(N)`` with ``phi(N) = max(floor, 1 - kappa * log2(N / knee))`` above the
    knee and 1 below it (model-notes 4.5), divided by the oversubscription above the leaf.
    """
    ratio = np.maximum(nodes / profiles.fabric_knee_nodes, 1.0)
    phi = np.maximum(profiles.fabric_floor, 1.0 - profiles.fabric_kappa * np.log2(ratio))
    return profiles.fabric_eta * phi / profiles.oversubscription
