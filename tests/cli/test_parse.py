"""`fabricscope parse SOURCE FILE`: the spider's own request, answered with FILE, whatever
the source (a curated file:// source, a POST API), FILE relative to the working directory."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from tests.helpers import ROOT, fabricscope

CURATED = ROOT / "fabricscope" / "scrapers" / "curated" / "fabric_facts.csv"
RUNPOD = ROOT / "fixtures" / "runpod_graphql" / "runpod_graphql-gpuTypes_2026-09.json"


def parse(tmp_path: Path, *args: str, cwd: Path | None = None) -> dict[str, Any]:
    # no warehouse: the anomaly check must not compare with a developer's own data
    env = {"FABRICSCOPE_WAREHOUSE": str(tmp_path / "no-warehouse.duckdb")}
    done = fabricscope("parse", *args, "--format", "json", env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def curated_copy(folder: Path) -> Path:
    """The curated file's header and first row, that row's instance type renamed."""
    with CURATED.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        first = next(reader)
        assert next(reader, None) is not None  # the repository copy has more rows
        columns = reader.fieldnames
    assert columns
    first["instance_type"] = "only-in-the-copy.8x"
    copy = folder / "facts-copy.csv"
    with copy.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerow(first)
    return copy


def test_a_curated_source_reads_the_given_file_not_the_repository_copy(tmp_path):
    parsed = parse(tmp_path, "curated_fabric", str(curated_copy(tmp_path)))
    assert parsed["status"] == "ok", parsed["error"]
    assert [f["instance_type"] for f in parsed["fabric_facts"]] == ["only-in-the-copy.8x"]


def test_a_post_source_is_answered_with_the_file(tmp_path):
    parsed = parse(tmp_path, "runpod_graphql", str(RUNPOD))
    assert parsed["status"] == "ok", parsed["error"]
    assert parsed["stats"]["fabricscope/replay/served"] == 1
    assert "fabricscope/replay/unknown_url" not in parsed["stats"]
    secure = {o["instance_type"]: o for o in parsed["offers"]}[
        "NVIDIA H100 80GB HBM3 (secure cloud)"
    ]
    assert secure["price_usd_per_gpu_hour"] == 3.49
    assert secure["source_url"] == "https://api.runpod.io/graphql"


def test_a_relative_file_is_read_from_the_working_directory(tmp_path):
    curated_copy(tmp_path)  # facts-copy.csv in tmp_path; the repository has no such file
    assert not (ROOT / "facts-copy.csv").exists()
    parsed = parse(tmp_path, "curated_fabric", "facts-copy.csv", cwd=tmp_path)
    assert [f["instance_type"] for f in parsed["fabric_facts"]] == ["only-in-the-copy.8x"]


def test_a_missing_file_is_a_one_line_usage_error(tmp_path):
    done = fabricscope("parse", "runpod_graphql", "missing.json", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"no such file: {tmp_path / 'missing.json'}" in done.stderr
