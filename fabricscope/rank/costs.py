"""The whole cost of a job on one offer: the GPU time it runs, what the price's commitment
makes you pay beyond it, and the storage, egress and support it needs.

- **GPU time**: the estimator's ``cost_usd`` (hours to finish x GPUs rented x price) at each
  fabric end.
- **The commitment floor**: a reserved tier is paid for its whole term (``TIER_MONTHS``); a
  quote's term, minimum rental (months) and minimum GPUs raise the hours and GPUs billed; a
  calendar booking is paid whole, and a run longer than it is said not to fit.
  ``commitment_usd`` is what the floor adds to the GPU time.
- **Storage**: the checkpoints kept (``CHECKPOINT_BYTES_PER_PARAM`` of the trainable
  parameters each) and the dataset, if given, for as long as the job runs, at the provider's
  stated price per TB-month (``provider_costs``, sourced) or the price the user gives.
- **Egress**: the trained weights (``WEIGHTS_BYTES_PER_PARAM``), or the TB the user gives,
  at the provider's stated price per GB or the user's.
- **Serving** (a workload of kind "serving"): the GPUs for the service's hours; storage holds
  the served weights; egress is only what the user gives (answers leave as API responses,
  which no price list here covers).
- **Support**: none unless asked for: a plan the user prices as a share of the GPU bill, or
  the provider's stated plan (``include_stated_support``).

A part whose price nobody states is unknown: it is named in ``costs_unknown`` and not added,
so ``total_cost_usd`` is then the known parts, a floor; it is never counted as zero.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from fabricscope.warehouse.models import TIER_MONTHS, PricingTier

# Hours in the month providers bill by: 8,760 hours a year over 12 (Nebius prices storage
# "per 730 hours"; AWS bills a month of an instance as 730 hours).
HOURS_PER_MONTH = 730.0
# A training checkpoint with mixed-precision Adam holds, per trainable parameter, the 16-bit
# weights (2 bytes), the fp32 master weights (4) and Adam's two fp32 moments (4 + 4): the
# "16 bytes per parameter" of model states in ZeRO (Rajbhandari et al., 2020, section 3.1,
# arXiv:1910.02054) less the 2 bytes of 16-bit gradients, which a checkpoint does not keep.
CHECKPOINT_BYTES_PER_PARAM = 14.0
# the trained weights as they are downloaded: 16-bit (bf16), 2 bytes per parameter
WEIGHTS_BYTES_PER_PARAM = 2.0
TB = 1e12

COST_PARTS = ("commitment_usd", "storage_usd", "egress_usd", "support_usd")


class CostInputs(BaseModel):
    """What the user says about the job's storage, downloads and support (all optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset_tb: float | None = Field(
        default=None,
        ge=0,
        le=1e6,
        description="TB of training data kept on the provider's storage (not given: not costed)",
    )
    checkpoints_kept: int = Field(
        default=2, ge=0, le=1000, description="checkpoints kept on storage at once"
    )
    egress_tb: float | None = Field(
        default=None,
        ge=0,
        le=1e6,
        description="TB downloaded from the provider (default: the trained weights)",
    )
    storage_usd_per_tb_month: float | None = Field(
        default=None, ge=0, le=1e6, description="your storage price, for every provider"
    )
    egress_usd_per_gb: float | None = Field(
        default=None, ge=0, le=1e3, description="your egress price, for every provider"
    )
    support_pct: float | None = Field(
        default=None, ge=0, le=100, description="a support plan you buy, as % of the GPU bill"
    )
    include_stated_support: bool = Field(
        default=False, description="add each provider's stated support plan (its first tier)"
    )


def _known(value: Any) -> float | None:
    """A number, or None where the cell is empty (None, NaN, NA)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _day(value: Any) -> date | None:
    if value is None or (not isinstance(value, str | date) and pd.isna(value)):
        return None
    return pd.Timestamp(value).date()


def commitment(offer: Mapping[str, Any]) -> tuple[float, int, str | None]:
    """(the fewest hours billed, the fewest GPUs billed, what sets them) for an offer."""
    hours, gpus, why = 0.0, 0, []
    tier = offer.get("pricing_tier")
    months = _known(offer.get("quote_term_months"))
    if months is None and tier in {t.value for t in TIER_MONTHS}:
        months = float(TIER_MONTHS[PricingTier(tier)])
    if months:
        hours = months * HOURS_PER_MONTH
        why.append(f"a {months:g}-month term paid in full")
    least = _known(offer.get("quote_min_commit_months"))
    if least and least * HOURS_PER_MONTH > hours:
        hours = least * HOURS_PER_MONTH
        why.append(f"a {least:g}-month minimum rental")
    first, last = _day(offer.get("quote_booked_from")), _day(offer.get("quote_booked_to"))
    if first and last:
        booked = ((last - first).days + 1) * 24.0
        if booked > hours:
            hours = booked
        why.append(f"booked {first} to {last} ({booked / 24:,.0f} days), paid whole")
    fewest = _known(offer.get("quote_min_commit_gpus"))
    if fewest:
        gpus = int(fewest)
        why.append(f"at least {gpus:,} GPUs")
    return hours, gpus, "; ".join(why) or None


def whole_cost(
    row: Mapping[str, Any],
    workload: Any,
    inputs: CostInputs,
    time_h: str,
    time_low_h: str,
) -> dict[str, Any]:
    """The whole cost of a ranked row (its estimator's ``cost_usd`` and times), at both
    fabric ends, with its parts, the parts nobody prices, and notes."""
    price = float(row["price_usd_per_gpu_hour"])
    rented = int(row["nodes"]) * int(row["gpus_per_node"])
    floor_hours, floor_gpus, floor_why = commitment(row)
    billed_gpus = max(rented, floor_gpus)
    notes: list[str] = []
    unknown: list[str] = []

    serving = getattr(workload, "kind", None) == "serving"
    trainable = 0.0 if serving else float(getattr(workload, "trainable_params", 0.0) or 0.0)
    checkpoint_tb = inputs.checkpoints_kept * CHECKPOINT_BYTES_PER_PARAM * trainable / TB
    # a served model keeps its weights on storage (once), nothing to download
    weights_tb = float(workload.weight_bytes) / TB if serving else 0.0
    stored_tb = checkpoint_tb + weights_tb + (inputs.dataset_tb or 0.0)
    storage_rate = inputs.storage_usd_per_tb_month
    if storage_rate is None:
        storage_rate = _known(row.get("cost_storage_usd_per_tb_month"))
    egress_tb = inputs.egress_tb
    if egress_tb is None:
        egress_tb = WEIGHTS_BYTES_PER_PARAM * trainable / TB
    egress_rate = inputs.egress_usd_per_gb
    if egress_rate is None:
        egress_rate = _known(row.get("cost_egress_usd_per_gb"))
    support_pct = inputs.support_pct
    if support_pct is None and inputs.include_stated_support:
        support_pct = _known(row.get("cost_support_uplift_pct"))
        if support_pct is None:
            unknown.append("support")

    def at(hours: float, run_cost: float) -> dict[str, float | None]:
        billed_hours = max(hours, floor_hours)
        gpu = billed_hours * billed_gpus * price
        storage = (
            None if storage_rate is None else stored_tb * hours / HOURS_PER_MONTH * storage_rate
        )
        egress = (
            0.0 if not egress_tb else None if egress_rate is None else egress_tb * 1e3 * egress_rate
        )
        support = None if support_pct is None else gpu * support_pct / 100.0
        total = gpu + sum(v for v in (storage, egress, support) if v is not None)
        return {
            "gpu": gpu,
            "commitment": max(0.0, gpu - run_cost),
            "storage": storage,
            "egress": egress,
            "support": support,
            "total": total,
        }

    slow = at(float(row[time_h]), float(row["cost_usd"]))
    fast = at(float(row[time_low_h]), float(row["cost_usd_low"]))
    if storage_rate is None:
        unknown.append("storage")
    if egress_rate is None and egress_tb:
        unknown.append("egress")
    if floor_why:
        notes.append(f"commitment: {floor_why}")
        first, last = _day(row.get("quote_booked_from")), _day(row.get("quote_booked_to"))
        if first and last and float(row[time_h]) > ((last - first).days + 1) * 24.0:
            notes.append(
                f"the run ({float(row[time_h]) / 24:,.1f} days at the worse end) does not fit "
                f"the booking ({first} to {last})"
            )
    basis = [f"GPUs: {billed_gpus:,} x ${price:,.2f} per GPU-hour"]
    if floor_why:
        basis.append(f"billed at least {floor_hours:,.0f} hours ({floor_why})")
    kept = (
        f"the weights, {weights_tb:,.2f} TB"
        if serving
        else f"{inputs.checkpoints_kept} checkpoints of "
        f"{checkpoint_tb / max(inputs.checkpoints_kept, 1):,.2f} TB"
    )
    basis.append(
        f"storage: {stored_tb:,.2f} TB ({kept}"
        + (f" and {inputs.dataset_tb:g} TB of data" if inputs.dataset_tb else "; data not given")
        + ")"
        + (
            f" at ${storage_rate:,.2f} per TB-month"
            if storage_rate is not None
            else ", price unknown"
        )
    )
    if not egress_tb:
        basis.append("egress: none")
    else:
        basis.append(
            f"egress: {egress_tb:,.2f} TB"
            + (f" at ${egress_rate:g} per GB" if egress_rate is not None else ", price unknown")
        )
    if support_pct is not None:
        basis.append(f"support: {support_pct:g}% of the GPU bill")
    elif not inputs.include_stated_support:
        basis.append("support: none included")
    return {
        "total_cost_usd": slow["total"],
        "total_cost_usd_low": fast["total"],
        "gpu_cost_usd": slow["gpu"],
        "commitment_usd": slow["commitment"],
        "storage_usd": slow["storage"],
        "egress_usd": slow["egress"],
        "support_usd": slow["support"],
        "costs_unknown": ", ".join(unknown) or None,
        "cost_basis": "; ".join(basis),
        "cost_notes": notes,
    }
