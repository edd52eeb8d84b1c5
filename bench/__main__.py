"""`python -m bench`: run every benchmark and write bench/results.md."""

from __future__ import annotations

import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from bench import (
    bench_app,
    bench_browser,
    bench_cli,
    bench_model,
    bench_publish,
    bench_rank,
    bench_refresh,
    bench_serving,
)

RESULTS = Path(__file__).parent / "results.md"


def main() -> int:
    def report(message: str) -> None:
        print(f"[bench] {message}", file=sys.stderr, flush=True)

    lines = [
        "# fabricscope benchmarks",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}, DuckDB {duckdb.__version__}. "
        "Ratios are measured side by side in one process; absolute seconds depend on the machine.",
        "",
    ]
    lines += bench_publish.run(report)
    lines += bench_refresh.run(report)
    lines += bench_model.run(report)
    lines += bench_serving.run(report)
    lines += bench_rank.run(report)
    lines += bench_app.run(report)
    lines += bench_cli.run(report)
    lines += bench_browser.run(report)
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
