"""The real `fabricscope` command in subprocesses, against a real warehouse file."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, fabricscope, publish_synthetic, python_env


@pytest.fixture
def wh(tmp_path):
    path = tmp_path / "data" / "warehouse.duckdb"
    result = fabricscope("init", "--warehouse", str(path))
    assert result.returncode == 0, result.stderr
    publish_synthetic(path, 40, source="alpha")
    return path


def test_the_installed_console_script_lists_the_verbs():
    script = Path(sys.executable).parent / "fabricscope"
    result = subprocess.run(
        [str(script), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=python_env(),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for verb in ("init", "status", "sql", "export", "serve"):
        assert verb in result.stdout


def test_init_is_idempotent(wh):
    again = fabricscope("init", "--warehouse", str(wh))
    assert again.returncode == 0 and "already up to date" in again.stderr


def test_sql_prints_rows_in_each_format(wh):
    query = "select instance_type, gpu_count from offers_current order by instance_type limit 3"
    as_json = fabricscope("sql", query, "--warehouse", str(wh), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    records = json.loads(as_json.stdout)
    assert [r["instance_type"] for r in records] == ["syn-0", "syn-1", "syn-10"]
    as_csv = fabricscope("sql", query, "--warehouse", str(wh), "--format", "csv")
    assert next(csv.reader(io.StringIO(as_csv.stdout))) == ["instance_type", "gpu_count"]
    as_table = fabricscope("sql", query, "--warehouse", str(wh))
    assert "syn-10" in as_table.stdout


def test_sql_refusal_is_one_line_and_a_nonzero_exit(wh):
    result = fabricscope("sql", "select * from read_csv('/etc/passwd')", "--warehouse", str(wh))
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: refused:")


def test_warehouse_from_the_environment(wh):
    result = fabricscope(
        "sql",
        "select count(*) as n from offers_current",
        "--format",
        "json",
        env={"FABRICSCOPE_WAREHOUSE": str(wh)},
    )
    assert json.loads(result.stdout) == [{"n": 40}]


def test_status_shows_sources_and_verifies(wh):
    result = fabricscope("status", "--warehouse", str(wh), "--format", "json", "--verify")
    assert result.returncode == 0, result.stderr
    sources = json.loads(result.stdout)
    assert [s["source"] for s in sources] == ["alpha"] and sources[0]["stale"] is False
    assert "verified" in result.stderr


def test_missing_warehouse_says_how_to_build_it(tmp_path):
    result = fabricscope("status", "--warehouse", str(tmp_path / "none.duckdb"))
    assert result.returncode == 1
    assert "fabricscope init" in result.stderr and "Traceback" not in result.stderr


def test_export_parquet(wh, tmp_path):
    out = tmp_path / "parquet"
    result = fabricscope(
        "export", "--parquet", str(out), "--view", "offers_current", "--warehouse", str(wh)
    )
    assert result.returncode == 0, result.stderr
    assert "offers_current.parquet: 40 rows" in result.stdout
    assert (out / "offers_current.parquet").exists()
    assert fabricscope("export", "--warehouse", str(wh)).returncode == 2


def test_usage_errors_exit_two_without_traceback():
    result = fabricscope("sql")
    assert result.returncode == 2 and "Traceback" not in result.stderr
