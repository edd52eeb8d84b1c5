"""A full offline refresh of every source, and catalog parse+normalise throughput.

Throughput: a 50,000-row catalog in SkyPilot's Vast format (the real recording's
rows repeated with distinct instance types: synthetic, for timing only) through the
real spider and item pipelines, against a baseline in this process that does the
least any parser must do: read each CSV row and validate one Offer contract.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fabricscope.warehouse.models import Offer, utc_now

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "fixtures" / "skypilot_vast" / "skypilot-catalog_v8_vast_vms.csv"
ROWS = 50_000


def _run(args: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        args,
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    if result.returncode not in ok:
        raise RuntimeError(f"{' '.join(args[:4])} failed: {result.stderr[-1000:]}")
    return time.perf_counter() - started


def _big_catalog(path: Path) -> int:
    with CATALOG.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        fields = reader.fieldnames or []
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for index in range(ROWS):
            row = dict(rows[index % len(rows)])
            row["InstanceType"] = f"{row['InstanceType']}-bench{index}"
            writer.writerow(row)
    return ROWS


def _baseline(path: Path) -> float:
    """Read every row and validate one Offer each: the floor for any parser."""
    started = time.perf_counter()
    now = utc_now()
    for row in csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))):
        count = max(1, int(float(row["AcceleratorCount"] or 1)))
        price = float(row["Price"])
        Offer(
            provider="vast_ai",
            source="bench",
            instance_type=row["InstanceType"],
            region=row["Region"] or None,
            gpu_name=row["AcceleratorName"],
            gpu_count=count,
            pricing_tier="on_demand",
            price_basis="per_instance",
            price=price,
            currency="USD",
            price_usd_per_hour=price,
            price_usd_per_gpu_hour=price / count,
            source_url="https://example.invalid/bench",
            obtained_by="catalog",
            observed_at=now,
        )
    return time.perf_counter() - started


def run(report: Callable[[str], None]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="fabricscope-bench-") as tmp:
        report("full offline refresh of every source")
        refresh_s = _refresh(Path(tmp))
        report(f"parse + normalise a {ROWS:,}-row catalog")
        big = Path(tmp) / "vast_big.csv"
        _big_catalog(big)
        parse_s = _run(
            [sys.executable, "-m", "fabricscope.scrapers.tools", "parse", "skypilot_vast", str(big)]
        )
        startup_s = _run(
            [
                sys.executable,
                "-m",
                "fabricscope.scrapers.tools",
                "parse",
                "skypilot_vast",
                str(CATALOG),
            ]
        )
        baseline_s = _baseline(big)
    pipeline_s = parse_s - startup_s
    return [
        "",
        "### Offline refresh and catalog throughput",
        "",
        "| measure | seconds | rows per second |",
        "|---|---|---|",
        f"| full offline refresh, every source, one crawl process (target < 60 s) "
        f"| {refresh_s:.1f} | |",
        f"| spider + item pipelines on a {ROWS:,}-row catalog, end to end | {parse_s:.1f} "
        f"| {ROWS / parse_s:,.0f} |",
        f"| of which process start and a 67-row run | {startup_s:.1f} | |",
        f"| baseline: read each row and validate one Offer, in process | {baseline_s:.1f} "
        f"| {ROWS / baseline_s:,.0f} |",
        "",
        f"**Ratio: the spider and its six pipelines take {pipeline_s / baseline_s:.1f}x the "
        "bare read-and-validate baseline** (start-up excluded).",
    ]


def _refresh(tmp: Path) -> float:
    # exit 3: some sources have no usable recording (constructed examples) and fail
    return _run(
        [
            sys.executable,
            "-m",
            "fabricscope.cli",
            "refresh",
            "--offline",
            "--warehouse",
            str(tmp / "refresh" / "warehouse.duckdb"),
            "--format",
            "csv",
        ],
        {"FABRICSCOPE_DATA_DIR": str(tmp / "refresh")},
        ok=(0, 3),
    )
