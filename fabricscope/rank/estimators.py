"""The estimator seam: what the ranking asks of a model, and the training model behind it.

The ranking (fabricscope/rank/ranking.py) owns everything that is the same whatever the
workload: which offers can host a job and why the others cannot, the fabric's pessimistic
and optimistic ends, the distinct hardware profiles the model runs on (once each), budgets,
deadlines, the score, the Pareto front and the providers' table. An ``Estimator`` owns what
depends on the kind of workload: the model call over those profiles, the columns a ranked row
carries, a row's time and cost from the model's results at both fabric ends, and why a job
has no plan on some hardware. A workload names its kind (``Workload.kind``); ``estimator_for``
finds its estimator. Training is the one kind today; a serving estimator plugs in here
(docs/ARCHITECTURE.md, "Adding an estimator").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from fabricscope.model import error_bands
from fabricscope.model.scaling import FAILURE_PART, estimate
from fabricscope.model.scaling import STEP_PARTS as MODEL_STEP_PARTS
from fabricscope.model.workload import Workload
from fabricscope.rank import catalog

# ---- the columns every ranked row has, whatever the estimator; an estimator's columns
# (``Estimator.columns``) are these pieces with its own outputs between them

OFFER_COLUMNS = (
    "rank",
    "provider",
    "sold_by",
    "sold_and_run_by",
    "offer_label",
    "gpu_model",
    "gpus_per_node",
    "gpus",
    "nodes",
    "instance_type",
    "region",
    "regions",
    "region_count",
    "pricing_tier",
)
FABRIC_COLUMNS = (
    "fabric_class",
    "fabric_estimated_as",
    "fabric_gbps_costed",
    "fabric_range",
    "multi_node",
    "multi_node_reason",
    "fabric_gbps_per_gpu",
    "fabric_source_url",
    "fabric_source_grade",
    "fabric_source_date",
    "fabric_observed_at",
    "fabric_evidence",
)
PRICE_COLUMNS = (
    "price_usd_per_gpu_hour",
    "price_basis",
    "price_source_url",
    "price_observed_at",
    "price_obtained_by",
    "price_published_by",
    "quote_id",
    "quote_valid_until",
    "data_age_days",
    "transparency_score",
    "pareto",
    "score",
)
TAIL_COLUMNS = ("notes", "offer_key", "snapshot_id")
# the whole cost of the job and its parts (fabricscope/rank/costs.py), whatever the estimator
COST_COLUMNS = (
    "total_cost_usd",
    "total_cost_usd_low",
    "gpu_cost_usd",
    "commitment_usd",
    "storage_usd",
    "egress_usd",
    "support_usd",
    "costs_unknown",
    "cost_basis",
)


class Estimator(Protocol):
    """What the ranking needs from a model of one kind of workload.

    A profile is a dict of hardware (``gpu_model``, ``gpu_count``, ``gpus_per_node``,
    ``fabric_class``, ``fabric_gbps_per_gpu``, a provider's measured collectives); a
    candidate is an offer at one GPU count with its fabric ends (``pessimistic``,
    ``optimistic``), ``nodes``, ``gpus_per_node`` and ``notes``.
    """

    kind: ClassVar[str]  # the Workload.kind it estimates
    # a ranked row's columns, in order: OFFER_COLUMNS, the estimator's outputs, COST_COLUMNS,
    # FABRIC_COLUMNS, PRICE_COLUMNS, TAIL_COLUMNS
    columns: ClassVar[tuple[str, ...]]
    # the row's time at the worse and the better fabric end (``worse``): what deadlines, the
    # blend score, the Pareto front and the order of equal scores read (lower is better)
    time: ClassVar[str]
    time_low: ClassVar[str]
    # the hours the GPUs are rented for at each end: what the whole cost bills (training: the
    # time to train; serving: the service's hours)
    hours: ClassVar[str]
    hours_low: ClassVar[str]
    # columns a ranked row gains after its cost that are not stored with a materialised
    # ranking (they follow shipped data, set again when it is served: ``annotate``), and of
    # them the ones the providers' table shows
    annotations: ClassVar[tuple[str, ...]]
    provider_annotations: ClassVar[tuple[str, ...]]

    def annotate(self, frame: pd.DataFrame, workload: Any) -> pd.DataFrame:
        """``frame`` (ranked rows, fresh or stored) with ``annotations`` set."""
        ...

    def worse(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        """Whether result ``a`` (one fabric end) is strictly worse for the buyer than ``b``:
        the ranked row is the worse end, what a buyer can count on."""
        ...

    def results(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[dict]:
        """One result per profile (vectorised: one model call for all of them); each has
        ``self.time`` in hours and ``has_plan`` (as ``has_plan`` says)."""
        ...

    def has_plan(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[bool]:
        """Whether the workload has a plan on each profile (fits, has a layout)."""
        ...

    def row(
        self,
        workload: Any,
        candidate: Mapping[str, Any],
        slow: Mapping[str, Any],
        fast: Mapping[str, Any],
        rented_gpus: int,
    ) -> dict[str, Any]:
        """A ranked row's outputs from the results at the slower and the faster end: its
        columns, ``cost_usd`` and ``cost_usd_low`` (USD at each end), ``has_plan`` and the
        notes it adds (``notes``, a list)."""
        ...

    def no_plan_reason(self, workload: Any, row: Mapping[str, Any]) -> str:
        """Why the workload has no plan on this row's hardware, in one line; ``row`` holds
        ``workable_gpus``: the nearest GPU counts that have one."""
        ...


# ---- training


# where a step's time goes (seconds per step) and the share of time not lost to failures
STEP_PARTS = (
    "step_time_s",
    *(part.field for part in MODEL_STEP_PARTS),
    FAILURE_PART.field,
    "goodput",
)


class TrainingEstimator:
    """Time to train and its cost: the scaling model (fabricscope/model/scaling.py)."""

    kind: ClassVar[str] = "training"
    columns: ClassVar[tuple[str, ...]] = (
        *OFFER_COLUMNS,
        "time_to_train_h",
        "time_to_train_h_low",
        "cost_usd",
        "cost_usd_low",
        "usd_per_million_tokens",
        "mfu",
        "verdict",
        "comm_fraction_exposed",
        "fabric_share_of_comm",
        "layout",
        "memory_gb_per_gpu",
        *COST_COLUMNS,
        *FABRIC_COLUMNS,
        *PRICE_COLUMNS,
        *STEP_PARTS,
        *TAIL_COLUMNS,
    )
    time: ClassVar[str] = "time_to_train_h"
    time_low: ClassVar[str] = "time_to_train_h_low"
    hours: ClassVar[str] = "time_to_train_h"
    hours_low: ClassVar[str] = "time_to_train_h_low"
    # the model's error held out for the kind of job (fabricscope/model/error_bands.py): the
    # band and bias in percent, the published runs behind it, its cell in words, and the time
    # and GPU time's cost at its ends; not stored: it follows the shipped bands
    annotations: ClassVar[tuple[str, ...]] = (*error_bands.FIELDS, *error_bands.RANGE_FIELDS)
    provider_annotations: ClassVar[tuple[str, ...]] = error_bands.FIELDS

    def worse(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        """A longer time to train."""
        return bool(a[self.time] > b[self.time])

    def annotate(self, frame: pd.DataFrame, workload: Any) -> pd.DataFrame:
        """``frame`` with the error band (``_with_bands``) and the time and cost at its ends."""
        out = _with_bands(frame, lambda gpu: error_bands.band_for(gpu, workload))
        spans = error_bands.ranges(
            out["error_band_pct"],
            out["time_to_train_h"],
            out["time_to_train_h_low"],
            out["cost_usd"],
            out["cost_usd_low"],
        )
        return out.assign(**spans)

    # the model outputs carried onto each row (at the slower end)
    outputs: ClassVar[tuple[str, ...]] = (
        "time_to_train_h",
        "gpu_hours",
        "mfu",
        "comm_fraction_exposed",
        "fabric_share_of_comm",
        "memory_gb_per_gpu",
        *STEP_PARTS,
    )

    def results(self, workload: Workload, profiles: Sequence[Mapping[str, Any]]) -> list[dict]:
        result = estimate(workload, catalog.build(profiles))
        rows = [result.row(i) for i in range(len(profiles))]
        return [{**row, "has_plan": bool(row["fits_memory"])} for row in rows]

    def has_plan(self, workload: Workload, profiles: Sequence[Mapping[str, Any]]) -> list[bool]:
        return [bool(f) for f in estimate(workload, catalog.build(profiles)).fits_memory]

    def row(
        self,
        workload: Workload,
        candidate: Mapping[str, Any],
        slow: Mapping[str, Any],
        fast: Mapping[str, Any],
        rented_gpus: int,
    ) -> dict[str, Any]:
        notes: list[str] = []
        moved = slow["batch_sequences"] - workload.batch_sequences
        if slow["fits_memory"] and moved:
            notes.append(
                f"planned with a batch of {slow['batch_sequences']:,.0f} sequences, not "
                f"{workload.batch_sequences:,} ({moved / workload.batch_sequences:+.1%}): no "
                f"layout on {candidate['gpus']:,} GPUs divides the workload's"
            )
        if slow["fits_memory"] and slow["stages"]:
            notes.append(f"uneven pipeline stages: {slow['stages']} layers")
        price = float(candidate["price_usd_per_gpu_hour"])
        cost = slow["time_to_train_h"] * rented_gpus * price
        return {
            **{name: slow[name] for name in self.outputs},
            "gpu_hours": slow["time_to_train_h"] * rented_gpus,
            "has_plan": bool(slow["fits_memory"]) and bool(np.isfinite(slow["time_to_train_h"])),
            "fits_memory": bool(slow["fits_memory"]),
            "layout_found": bool(slow["layout_found"]),
            "verdict": slow["verdict"],
            "layout": slow["layout"],
            "time_to_train_h_low": fast["time_to_train_h"],
            "cost_usd": cost,
            "cost_usd_low": fast["time_to_train_h"] * rented_gpus * price,
            "usd_per_million_tokens": cost / (workload.tokens / 1e6),
            "notes": notes,
            **self._verdict_range(candidate, slow, fast),
        }

    @staticmethod
    def _verdict_range(
        candidate: Mapping[str, Any], slow: Mapping[str, Any], fast: Mapping[str, Any]
    ) -> dict[str, str]:
        if candidate["fabric_range"] and fast["verdict"] != slow["verdict"]:
            worst = candidate["pessimistic"][0]
            return {"verdict": f"{slow['verdict']} (on {worst}) to {fast['verdict']}"}
        return {}

    def no_plan_reason(self, workload: Workload, row: Mapping[str, Any]) -> str:
        gpus = int(row["gpus"])
        if not row["layout_found"]:
            why = (
                f"no layout runs the exact batch of {workload.batch_sequences:,} sequences on "
                f"{gpus:,} GPUs (data-parallel ranks x micro-batch must divide it)"
            )
        else:
            memory = row.get("gpu_memory_gb")
            of = f" of the {float(memory):.0f} GB it has" if memory else ""
            why = (
                f"does not fit in GPU memory on {gpus:,} GPUs: the leanest layout "
                f"({row['layout']}) needs {row['memory_gb_per_gpu']:.0f} GB per GPU{of}"
            )
        near = row.get("workable_gpus") or ()
        if near:
            return f"{why}; it has a plan on {' or '.join(f'{n:,}' for n in near)} GPUs"
        return f"{why}; none of the GPU counts tried near it (up to 16x) has a plan"


TRAINING = TrainingEstimator()


def _with_bands(
    frame: pd.DataFrame, band_of: Callable[[Any], error_bands.ErrorBand | None]
) -> pd.DataFrame:
    """``frame`` with ``error_bands.FIELDS``: one band per distinct GPU model (``band_of``;
    it depends on the GPU's generation and the job alone), each row taking its model's as
    typed arrays, not mapped row by row (a NULL model's code is -1: no band)."""
    codes, gpus = pd.factorize(frame["gpu_model"])
    bands = [band_of(gpu) for gpu in gpus]
    fields = [band.fields() if band is not None else {} for band in bands]

    def column(name: str, dtype: str) -> Any:
        values = pd.array([f.get(name) for f in fields], dtype=dtype)
        return values.take(codes, allow_fill=True)

    return frame.assign(
        error_band_pct=column("error_band_pct", "Float64").to_numpy(np.float64, na_value=np.nan),
        error_bias_pct=column("error_bias_pct", "Float64").to_numpy(np.float64, na_value=np.nan),
        error_band_runs=column("error_band_runs", "Int64"),
        error_band_cell=_categories([f.get("error_band_cell") for f in fields], codes),
    )


def _categories(labels: Sequence[str | None], codes: np.ndarray) -> pd.Categorical:
    """Each row's label (``labels`` by ``codes``, -1 for none) as a categorical: a few
    distinct texts over many rows, taken without copying a string per row."""
    label_codes, names = pd.factorize(pd.Series(labels, dtype=object))
    return pd.Categorical.from_codes(np.append(label_codes, -1)[codes], categories=names)


# ---- serving


def _per_gpu(result: Mapping[str, Any]) -> float:
    """A serving result's output tokens/s per GPU, -inf where it has no plan."""
    value = result.get("tokens_per_s_per_gpu")
    if not result.get("fits") or value is None or not math.isfinite(float(value)):
        return -math.inf
    return float(value)


class ServingEstimator:
    """Serving a model to a load for some hours: the serving model
    (fabricscope/model/serving.py). A row rents its GPU count in whole nodes for the
    service's hours; it has a plan when a replica fits and meets the latency targets and, with
    a load, when its replicas carry the load at the slower fabric end. Its "time" is the time
    per output token reached (ms), so the blend, the Pareto front and ``objective="time"``
    weigh latency against cost; serving has no deadline."""

    kind: ClassVar[str] = "serving"
    columns: ClassVar[tuple[str, ...]] = (
        *OFFER_COLUMNS,
        "usd_per_million_output_tokens",
        "usd_per_million_input_tokens",
        "tpot_ms",
        "tpot_ms_low",
        "ttft_ms",
        "tokens_per_s_per_gpu",
        "tokens_per_s_per_gpu_low",
        "capacity_requests_per_s",
        "capacity_requests_per_s_low",
        "load_requests_per_s",
        "replicas",
        "replica_gpus",
        "layout",
        "batch",
        "verdict",
        "fabric_share",
        "memory_gb_per_gpu",
        "service_hours",
        "cost_usd",
        "cost_usd_low",
        *COST_COLUMNS,
        *FABRIC_COLUMNS,
        *PRICE_COLUMNS,
        *TAIL_COLUMNS,
    )
    time: ClassVar[str] = "tpot_ms"
    time_low: ClassVar[str] = "tpot_ms_low"
    hours: ClassVar[str] = "service_hours"
    hours_low: ClassVar[str] = "service_hours"
    # the serving model's error held out (fabricscope/model/error_bands.py, SERVING): the
    # band and bias of output tokens/s per GPU at the latency target, in percent, the
    # published serving runs behind it, its cell in words, and the tokens/s per GPU and USD
    # per million output tokens at its ends; not stored: it follows the shipped bands
    annotations: ClassVar[tuple[str, ...]] = (
        *error_bands.FIELDS,
        *error_bands.SERVING_RANGE_FIELDS,
    )
    provider_annotations: ClassVar[tuple[str, ...]] = error_bands.FIELDS

    def annotate(self, frame: pd.DataFrame, workload: Any) -> pd.DataFrame:
        """``frame`` with the error band (``_with_bands``), and the tokens/s per GPU (from
        the worse fabric end less the band to the better end plus it) and USD per million
        output tokens (the ranked end's) at its ends."""
        out = _with_bands(frame, lambda gpu: error_bands.serving_band_for(gpu, workload))

        def floats(name: str) -> np.ndarray:
            return pd.to_numeric(out[name], errors="coerce").to_numpy(np.float64, na_value=np.nan)

        spans = error_bands.serving_ranges(
            out["error_band_pct"],
            floats("tokens_per_s_per_gpu"),
            floats("tokens_per_s_per_gpu_low"),
            floats("usd_per_million_output_tokens"),
        )
        return out.assign(**spans)

    def worse(self, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
        """Fewer output tokens per second per GPU (none where it has no plan): on a slower
        fabric the model may take a smaller batch, whose time per output token is shorter,
        so the time per token alone does not tell the worse end."""
        return _per_gpu(a) < _per_gpu(b)

    def results(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[dict]:
        from fabricscope.model.serving import estimate_serving

        result = estimate_serving(workload, catalog.build(profiles))
        rows = []
        for i, profile in enumerate(profiles):
            row = result.row(i)
            capacity = serving_capacity(workload, row, int(profile["gpu_count"]))
            rows.append(
                {
                    **row,
                    "capacity_requests_per_s": capacity,
                    "has_plan": bool(row["fits"]) and self._carries(workload, capacity),
                }
            )
        return rows

    def has_plan(self, workload: Any, profiles: Sequence[Mapping[str, Any]]) -> list[bool]:
        return [bool(row["has_plan"]) for row in self.results(workload, profiles)]

    @staticmethod
    def _carries(workload: Any, capacity: float) -> bool:
        return workload.requests_per_s is None or capacity >= workload.requests_per_s

    def row(
        self,
        workload: Any,
        candidate: Mapping[str, Any],
        slow: Mapping[str, Any],
        fast: Mapping[str, Any],
        rented_gpus: int,
    ) -> dict[str, Any]:
        notes: list[str] = []
        # every replica that fits on the GPUs paid for (whole nodes) serves
        capacity = serving_capacity(workload, slow, rented_gpus)
        capacity_low = serving_capacity(workload, fast, rented_gpus)
        has_plan = bool(slow["fits"]) and self._carries(workload, capacity)
        price = float(candidate["price_usd_per_gpu_hour"])
        hours = float(workload.hours)
        cost = hours * rented_gpus * price
        load = workload.requests_per_s
        per_million = {"usd_per_million_output_tokens": None, "usd_per_million_input_tokens": None}
        if has_plan:
            per_million = usd_per_million_tokens(workload, slow, rented_gpus * price, capacity)
            if load is not None and capacity > 2 * load:
                notes.append(f"carries {capacity:,.1f} requests/s, over twice the load of {load:g}")
        worst = candidate["pessimistic"][0] if candidate["fabric_range"] else None
        verdict = serving_verdict(slow, fast, worst)
        layout = serving_layout(slow, workload)
        return {
            "has_plan": has_plan,
            "fits": bool(slow["fits"]),
            **per_million,
            # at the percentile the targets hold for
            "tpot_ms": slow["tpot_ms_at_percentile"],
            "tpot_ms_low": fast["tpot_ms_at_percentile"],
            "ttft_ms": slow["ttft_ms_at_percentile"],
            "tokens_per_s_per_gpu": slow["tokens_per_s_per_gpu"],
            "tokens_per_s_per_gpu_low": fast["tokens_per_s_per_gpu"],
            "capacity_requests_per_s": capacity,
            "capacity_requests_per_s_low": capacity_low,
            "load_requests_per_s": load,
            "replicas": math.floor(rented_gpus / slow["replica_gpus"]) if slow["fits"] else None,
            # whole numbers, as the stored rankings hold them
            "replica_gpus": int(slow["replica_gpus"]) if slow["fits"] else None,
            "layout": layout,
            "batch": int(slow["batch"]) if slow["fits"] else None,
            "verdict": verdict,
            "fabric_share": slow["fabric_share"],
            "memory_gb_per_gpu": slow["memory_gb_per_gpu"],
            "service_hours": hours,
            "cost_usd": cost,
            "cost_usd_low": cost,
            "notes": notes,
        }

    def no_plan_reason(self, workload: Any, row: Mapping[str, Any]) -> str:
        gpus = int(row["gpus"])
        if not row.get("fits"):
            targets = [
                f"{name} {value:,.0f} ms"
                for name, value in (("TTFT", workload.ttft_ms), ("TPOT", workload.tpot_ms))
                if value is not None
            ]
            memory = row.get("gpu_memory_gb")
            of = f" of {float(memory):.0f} GB each" if memory else ""
            why = (
                f"no replica on up to {gpus:,} GPUs{of} holds the "
                f"{workload.weight_bytes / 1e9:,.0f} GB of weights and a sequence's KV cache"
                + (f" and meets {' and '.join(targets)}" if targets else "")
            )
        else:
            why = (
                f"{gpus:,} GPUs serve {row['capacity_requests_per_s']:,.2f} requests/s at the "
                f"targets, short of the load of {workload.requests_per_s:,.2f}"
            )
        near = row.get("workable_gpus") or ()
        if near:
            return f"{why}; it has a plan on {' or '.join(f'{n:,}' for n in near)} GPUs"
        return f"{why}; none of the GPU counts tried near it (up to 16x) has a plan"


def serving_capacity(workload: Any, result: Mapping[str, Any], gpus: float) -> float:
    """Requests per second the replicas that fit on ``gpus`` GPUs serve at the targets."""
    if not result["fits"]:
        return 0.0
    replicas = math.floor(gpus / result["replica_gpus"])
    return replicas * result["tokens_per_s_per_replica"] / workload.mean_output_tokens


def usd_per_million_tokens(
    workload: Any, result: Mapping[str, Any], usd_per_hour: float, capacity: float
) -> dict[str, float | None]:
    """USD per million output and per million input tokens of GPUs costing ``usd_per_hour``
    that serve the workload's load (or, without one, their ``capacity`` in requests/s), the
    cost split between prefill (input) and decode (output) by their share of a replica's
    time."""
    served = workload.requests_per_s if workload.requests_per_s is not None else capacity
    if not result["fits"] or not served or served <= 0:
        return {"usd_per_million_output_tokens": None, "usd_per_million_input_tokens": None}
    share = float(result["prefill_share"])
    per_second = usd_per_hour / 3600.0
    return {
        "usd_per_million_output_tokens": per_second
        * (1.0 - share)
        / (served * workload.mean_output_tokens / 1e6),
        "usd_per_million_input_tokens": per_second
        * share
        / (served * workload.mean_input_tokens / 1e6),
    }


# how a served row's verdict opens where a replica spans nodes (``spans_nodes``)
MULTI_NODE_VERDICT = "multi-node serving"


def spans_nodes(verdict: Any) -> bool:
    """Whether a served row's verdict (``serving_verdict``) says a replica spans nodes: where
    the fabric enters, and where no held-out serving run was measured."""
    return isinstance(verdict, str) and verdict.startswith(MULTI_NODE_VERDICT)


def serving_verdict(
    slow: Mapping[str, Any], fast: Mapping[str, Any] | None = None, worst: str | None = None
) -> str | None:
    """Whether the fabric matters to a served model: only when a replica spans nodes (or
    its prefill and decode GPUs do), and then by its share of a decode step's time (of the
    time to first token, for a KV cache handed over the fabric); where the fabric is a range
    (``worst``: its worse end's class), also the tokens per second per GPU the worse end
    loses against the better one, batch included."""
    if not slow["fits"]:
        return None
    if not slow["multi_node"]:
        return "the fabric does not matter: fits one node"
    of_what = " of the time to first token" if slow.get("kv_over_fabric") else ""
    verdict = f"{MULTI_NODE_VERDICT}: the fabric costs {slow['fabric_share']:.0%}{of_what}"
    if (
        worst
        and fast is not None
        and f"{fast['fabric_share']:.0%}" != f"{slow['fabric_share']:.0%}"
    ):
        verdict += f" (on {worst}) to {fast['fabric_share']:.0%}"
    # the share is of a step at each end's own batch: a slower fabric may also shrink the
    # batch that meets the targets, which the share does not show and the tokens do
    if worst and fast is not None and fast["fits"]:
        lost = 1.0 - float(slow["tokens_per_s_per_gpu"]) / float(fast["tokens_per_s_per_gpu"])
        if lost >= 0.05:
            verdict += f"; {lost:.0%} fewer tokens/s per GPU on {worst}"
    return verdict


def serving_note(job: Any, ranked: bool = True) -> str:
    """What a serving table assumes, as the CLI and the app say it: the lengths (or the mix),
    the load, the targets and their percentile, and (``ranked``) how a ranking's cost reads."""
    load = (
        f"{job.requests_per_s:,g} requests/s "
        f"({job.requests_per_s * job.mean_output_tokens:,.0f} output tokens/s)"
        if job.requests_per_s is not None
        else "no load given (every GPU rented serves)"
    )
    targets = ", ".join(
        f"{name} {value:,g} ms"
        for name, value in (("TTFT", job.ttft_ms), ("TPOT", job.tpot_ms))
        if value is not None
    )
    latency = (
        "latencies are means"
        if job.latency_percentile == "mean"
        else f"latencies at {job.latency_percentile}"
    )
    lengths = job.lengths_text()
    how = "; prefill and decode on separate GPUs" if job.disaggregated else ""
    note = f"{lengths}; {load}; {targets or 'no latency targets'} ({latency}){how}"
    if not ranked:
        return note
    return (
        f"{note}. Each offer is ranked at the fewest GPUs tried that carry the load. Cost: the "
        f"whole cost of those GPUs for {job.hours:,g} hours; USD per million tokens (USD/M) "
        "split between input and output by the time prefill and decoding take; TPOT a range "
        "where the fabric is unknown, offers ordered by the worse end."
    )


def serving_layout(result: Mapping[str, Any], job: Any = None) -> str | None:
    """A replica's layout as people read it: TP x PP, or DEP n for a MoE replica served
    attention data-parallel with its experts over n GPUs; its batch; disaggregated or not."""
    if not result["fits"]:
        return None
    wide = job is not None and job.attention_data_parallel and job.architecture.moe is not None
    if wide:
        # TensorRT-LLM's name: attention data-parallel, experts parallel over n GPUs
        shape = f"DEP{result['tp']:.0f}"
        if result["pp"] > 1:
            shape += f" x PP{result['pp']:.0f}"
    else:
        shape = f"TP{result['tp']:.0f} x PP{result['pp']:.0f}"
    split = ", prefill apart" if result.get("disaggregated") else ""
    return f"{shape}, batch {result['batch']:.0f}{split}"


SERVING = ServingEstimator()
ESTIMATORS: dict[str, Estimator] = {TRAINING.kind: TRAINING, SERVING.kind: SERVING}


def estimator_for(workload: Any) -> Estimator:
    """The estimator of ``workload``'s kind."""
    kind = getattr(workload, "kind", None)
    try:
        return ESTIMATORS[kind]
    except KeyError:
        raise ValueError(
            f"no estimator for workload kind {kind!r}; known: {', '.join(sorted(ESTIMATORS))}"
        ) from None
