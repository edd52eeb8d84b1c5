"""Helpers shared by the tests: real warehouses in temporary folders, real runs."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fabricscope.warehouse.db import PublishResult, StageHook
from fabricscope.warehouse.load import RunBatch, RunRecord, new_run_id, publish_run
from fabricscope.warehouse.models import Offer, RunMode, RunStatus, utc_now
from fabricscope.warehouse.synthetic import synthetic_offers

ROOT = Path(__file__).resolve().parent.parent
# "now" for tests that compare prices' ages (data_age_days) across rankings computed apart: a
# fixed time after every recording in fixtures/, passed to rank() and set as the app's
# FABRICSCOPE_AS_OF, so two rankings minutes apart age every price alike
AS_OF = datetime(2026, 12, 15, tzinfo=UTC)


def run_record(
    source: str,
    status: RunStatus = RunStatus.OK,
    *,
    scraped: int = 0,
    error: str | None = None,
    age: timedelta = timedelta(0),
) -> RunRecord:
    finished = utc_now() - age
    return RunRecord(
        run_id=new_run_id(source),
        source=source,
        mode=RunMode.REPLAY,
        started_at=finished - timedelta(seconds=5),
        finished_at=finished,
        status=status,
        items_scraped=scraped,
        error_text=error,
    )


def publish_synthetic(
    path: Path,
    rows: int,
    *,
    source: str = "synthetic",
    seed: int = 0,
    status: RunStatus = RunStatus.OK,
    age: timedelta = timedelta(0),
    on_stage: StageHook | None = None,
) -> tuple[RunStatus, PublishResult]:
    """Publish one run of ``rows`` synthetic offers (or a run without rows if not ok)."""
    error = None if status is RunStatus.OK else "synthetic failure"
    run = run_record(source, status, scraped=rows, age=age, error=error)
    offers = (
        synthetic_offers(rows, source=source, seed=seed, observed_at=run.finished_at)
        if status is RunStatus.OK
        else None
    )
    return publish_run(path, RunBatch(run, offers), on_stage=on_stage)


def python_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICSCOPE_")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def fabricscope(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the real console script in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "fabricscope.cli", *args],
        capture_output=True,
        text=True,
        env={**python_env(), **(env or {})},
        cwd=cwd or ROOT,
        timeout=timeout,
        check=False,
    )


def make_offer(usd_per_gpu_hour: float = 3.0, **changes: Any) -> Offer:
    """A valid offer for a test: an 8-GPU H100 SXM node listed per instance on a made-up page,
    at ``usd_per_gpu_hour``, with ``changes`` applied. The listed and hourly prices follow the
    per-GPU price and the GPU count unless ``changes`` gives them."""
    count = int(changes.get("gpu_count", 8))
    per_node = usd_per_gpu_hour * count
    fields: dict[str, Any] = {
        "provider": "alpha",
        "source": "alpha_page",
        "instance_type": "8x H100",
        "gpu_name": "H100 SXM",
        "gpu_model": "H100-SXM-80GB",
        "gpu_count": count,
        "pricing_tier": "on_demand",
        "price_basis": "per_instance",
        "price": per_node,
        "currency": "USD",
        "price_usd_per_hour": per_node,
        "price_usd_per_gpu_hour": usd_per_gpu_hour,
        "source_url": "https://alpha.example.invalid/prices",
        "obtained_by": "scraped",
        "observed_at": utc_now(),
    }
    fields.update(changes)
    return Offer(**fields)
