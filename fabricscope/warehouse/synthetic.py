"""Synthetic offers for benchmarks and warehouse tests, clearly marked as such.

Every row has provider ``synthetic`` and an ``example.invalid`` source URL so it
can never be mistaken for real data. Built with numpy in bulk (millions of rows
in a second or two).
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pyarrow as pa

from fabricscope.warehouse.models import OFFER_COLUMNS, utc_now

# Canonical ids that exist in reference/gpus.csv, plus None for "unknown".
_GPU_MODELS = np.array(
    ["H100-SXM-80GB", "A100-SXM-80GB", "H200-SXM-141GB", "L40S-PCIE-48GB", None], dtype=object
)
_GPU_COUNTS = np.array([1, 2, 4, 8])
_TIERS = np.array(["on_demand", "spot", "reserved_1y"], dtype=object)


def synthetic_offers(
    rows: int,
    *,
    source: str = "synthetic",
    seed: int = 0,
    observed_at: datetime | None = None,
) -> pa.Table:
    """``rows`` distinct offers (unique instance type per row) as an Arrow table."""
    rng = np.random.default_rng(seed)
    index = np.arange(rows)
    gpu_count = _GPU_COUNTS[rng.integers(0, len(_GPU_COUNTS), rows)]
    per_gpu = np.round(rng.uniform(0.5, 12.0, rows), 4)
    total = np.round(per_gpu * gpu_count, 4)
    gpu_model = _GPU_MODELS[rng.integers(0, len(_GPU_MODELS), rows)]
    stamp = observed_at or utc_now()
    table = pa.table(
        {
            "provider": pa.array(np.full(rows, "synthetic", dtype=object)),
            "source": pa.array(np.full(rows, source, dtype=object)),
            "instance_type": pa.array(np.char.add("syn-", index.astype(str)).astype(object)),
            "region": pa.array(np.full(rows, "synthetic-1", dtype=object)),
            "zones": pa.nulls(rows, pa.int32()),
            "gpu_name": pa.array(gpu_model),
            "gpu_model": pa.array(gpu_model),
            "gpu_count": pa.array(gpu_count, pa.int32()),
            "gpu_memory_gb": pa.nulls(rows, pa.float64()),
            "vcpus": pa.array(gpu_count * 16.0),
            "ram_gb": pa.array(gpu_count * 128.0),
            "pricing_tier": pa.array(_TIERS[index % len(_TIERS)]),
            "price_basis": pa.array(np.full(rows, "per_instance", dtype=object)),
            "price": pa.array(total),
            "currency": pa.array(np.full(rows, "USD", dtype=object)),
            "price_usd_per_hour": pa.array(total),
            "price_usd_per_gpu_hour": pa.array(np.round(total / gpu_count, 6)),
            "availability": pa.nulls(rows, pa.string()),
            "source_url": pa.array(
                np.full(rows, "https://example.invalid/synthetic", dtype=object)
            ),
            "obtained_by": pa.array(np.full(rows, "curated", dtype=object)),
            "observed_at": pa.array(np.full(rows, stamp), pa.timestamp("us", tz="UTC")),
        }
    )
    assert tuple(table.column_names) == OFFER_COLUMNS
    return table
