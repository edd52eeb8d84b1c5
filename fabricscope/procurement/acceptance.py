"""What a provider must demonstrate before the buyer accepts a cluster, and the contract terms
that cost money: read from ``acceptance.json`` (each item cited), asked in the RFI template
beside the questionnaire, and set per shortlisted offer in the memo with the threshold for
that offer and, where the buyer has measured it, pass or fail.

The all-reduce threshold is the bus bandwidth the offer's stated fabric should carry across
the measured number of nodes, as the model reckons it (``expected_all_reduce_busbw``: GPUs per
node x NIC bandwidth x the class's efficiency at that node count, fabric_classes.csv), less
the test's tolerance. A measurement is a stored nccl-tests all-reduce (``fabricscope
calibrate``) for the provider and that fabric class.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fabricscope.rank import catalog

ACCEPTANCE_FILE = Path(__file__).parent / "acceptance.json"


@dataclass(frozen=True)
class AcceptanceTest:
    id: str
    applies_to: str  # all | multi_node | moe_multi_node
    demonstrate: str
    how: str
    threshold: str
    tolerance: float | None
    source: str


@dataclass(frozen=True)
class Term:
    id: str
    question: str
    why: str
    source: str


@dataclass(frozen=True)
class Checklist:
    version: str
    tests: tuple[AcceptanceTest, ...]
    terms: tuple[Term, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.tests) + tuple(t.id for t in self.terms)


@cache
def checklist(path: Path = ACCEPTANCE_FILE) -> Checklist:
    data = json.loads(path.read_text(encoding="utf-8"))
    return Checklist(
        str(data["version"]),
        tuple(AcceptanceTest(**item) for item in data["tests"]),
        tuple(Term(**item) for item in data["terms"]),
    )


def expected_all_reduce_busbw(
    fabric_class: str | None, gbps_per_gpu: float | None, gpus_per_node: int, nodes: int
) -> float | None:
    """The all-reduce bus bandwidth (GB/s) the stated fabric should carry over ``nodes``
    nodes, as the model reckons it; None where the fabric or its bandwidth is not stated."""
    params = catalog.fabric_classes().get(str(fabric_class))
    if params is None or not gbps_per_gpu or nodes < 2 or fabric_class == "none":
        return None
    ratio = max(nodes / params.knee_nodes, 1.0)
    phi = max(params.phi_floor, 1.0 - params.kappa_per_doubling * math.log2(ratio))
    return gpus_per_node * float(gbps_per_gpu) / 8.0 * params.eta_small_scale * phi


@dataclass(frozen=True)
class Verdict:
    """One acceptance test for one offer: the threshold there, and its status."""

    test: AcceptanceTest
    threshold: str
    status: str  # "pass", "fail", "not measured", "cannot be set", "ask"
    detail: str


def _applies(test: AcceptanceTest, row: Mapping[str, Any], moe: bool) -> bool:
    multi = int(row["nodes"]) > 1
    return {
        "all": True,
        "multi_node": multi,
        "moe_multi_node": multi and moe,
    }[test.applies_to]


def verdicts(
    row: Mapping[str, Any],
    calibrations: Mapping[tuple[str, str], Mapping[str, Any]],
    moe: bool,
) -> list[Verdict]:
    """The acceptance tests that apply to a ranked offer, each with its threshold and status."""
    out = []
    stated = row.get("fabric_class")
    stated = (
        None if stated is None or (isinstance(stated, float) and math.isnan(stated)) else stated
    )
    nodes, per_node = int(row["nodes"]), int(row["gpus_per_node"])
    gbps = row.get("fabric_gbps_costed")
    for test in checklist().tests:
        if not _applies(test, row, moe):
            continue
        if test.id != "nccl_all_reduce":
            out.append(Verdict(test, test.threshold, "ask", "the provider demonstrates it"))
            continue
        at_job = expected_all_reduce_busbw(stated, gbps, per_node, nodes)
        if at_job is None or bool(row.get("fabric_range")):
            out.append(
                Verdict(
                    test,
                    "cannot be set: the offer states no fabric class and bandwidth",
                    "cannot be set",
                    "ask the provider to state its fabric and bandwidth per GPU first",
                )
            )
            continue
        keep = 1.0 - float(test.tolerance or 0.0)
        threshold = (
            f"at least {keep * at_job:,.0f} GB/s bus bandwidth on {nodes:,} nodes "
            f"({keep:.0%} of the {at_job:,.0f} GB/s {stated} at {float(gbps):g} Gb/s per GPU "
            "should carry)"
        )
        measured = calibrations.get((str(row["provider"]), str(stated)))
        if not measured:
            out.append(Verdict(test, threshold, "not measured", "no nccl-tests run stored"))
            continue
        measured_nodes = int(measured.get("n_nodes") or 2)
        busbw = float(measured["busbw_gbytes_s"])
        expected = expected_all_reduce_busbw(stated, gbps, per_node, measured_nodes)
        assert expected is not None
        floor = keep * expected
        passed = busbw >= floor
        detail = (
            f"measured {busbw:,.0f} GB/s on {measured_nodes:,} nodes against "
            f"{floor:,.0f} GB/s there ({measured.get('file_name')}, stored "
            f"{str(measured.get('uploaded_at'))[:10]})"
        )
        if passed and measured_nodes < nodes:
            detail += f"; the job runs on {nodes:,} nodes: test again at that count"
        out.append(Verdict(test, threshold, "pass" if passed else "fail", detail))
    return out
