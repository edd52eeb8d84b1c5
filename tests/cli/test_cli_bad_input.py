"""Hostile input to the real `fabricscope` command: one line on stderr, the right exit code,
nothing wrong stored, output bounded and escaped (issue 33's third and fourth bullets)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fabricscope.warehouse.db import read_frame
from tests.helpers import ROOT, fabricscope

NCCL = ROOT / "fixtures" / "nccl_tests"
# a number Python will not even turn into text without sys.set_int_max_str_digits
HUGE = "9" * 5000


def one_line(done: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert len(lines[0]) < 700, lines[0][:200]
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def hardware(tmp_path: Path, gpus: int | str = 64) -> Path:
    path = tmp_path / "hw.json"
    path.write_text(
        f'{{"gpu_model": "H100 SXM", "gpu_count": {gpus}, "gpus_per_node": 8, '
        '"fabric_class": "infiniband", "fabric_gbps_per_gpu": 400}'
    )
    return path


def calibrations(warehouse: Path) -> int:
    return int(read_frame(warehouse, "select count(*) from fabric_calibrations")[1].iloc[0, 0])


def test_a_shortlist_that_cannot_be_written_is_one_line(fixture_warehouse, tmp_path):
    # under a regular file: no one can make that folder, root included (a chmod would not stop
    # root, which the tests may run as)
    (tmp_path / "somefile").write_text("a file where a folder should be")
    output = tmp_path / "somefile" / "sub" / "x"
    done = fabricscope(
        "export", "--shortlist", "-w", "llama3-70b", "--gpus", "512", "--top", "3",
        "--output", str(output), "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    one_line(done, 1, "cannot write the shortlist", str(output))
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("upload", "nodes", "message"),
    [
        ("roce_2n_16g_all_reduce.txt", "1000000000", "at most 100,000 nodes"),
        ("roce_2n_16g_all_reduce.txt", "32", "does not fit the run's 16 ranks"),
        ("roce_2n_16g_all_reduce.txt", "3", "does not fit the run's 16 ranks"),
        ("roce_2n_16g_all_reduce.txt", "4", "rank lines list 2 hosts"),
    ],
)
def test_nodes_must_fit_the_ranks_of_the_run(warehouse_path, upload, nodes, message):
    done = fabricscope(
        "calibrate", str(NCCL / upload), "--provider", "x", "--fabric-class", "roce",
        "--nodes", nodes, "--warehouse", str(warehouse_path),
    )  # fmt: skip
    one_line(done, 2, message)
    assert calibrations(warehouse_path) == 0


def test_an_overflowing_fit_is_one_line_without_numpy_warnings(warehouse_path, tmp_path):
    text = (NCCL / "infiniband_2n_16g_all_reduce.txt").read_text()
    lines, row = [], 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 13 and parts[0].isdigit():  # result rows: times near the smallest float
            row += 1
            parts[5] = parts[9] = f"{1e-300 * row:.4e}"
            line = "  ".join(parts)
        lines.append(line)
    upload = tmp_path / "tiny_times.txt"
    upload.write_text("\n".join(lines))
    done = fabricscope(
        "calibrate", str(upload), "--provider", "x", "--fabric-class", "roce",
        "--warehouse", str(warehouse_path),
    )  # fmt: skip
    one_line(done, 2, "tiny_times.txt", "not a measurement")
    assert "Warning" not in done.stderr
    assert calibrations(warehouse_path) == 0


def test_an_unknown_scheduled_source_stops_every_command(tmp_path, fixture_warehouse):
    config = tmp_path / "fabricscope.toml"
    config.write_text('[schedule.sources.no_such_source]\ncron = "0 * * * *"\n')
    env = {"FABRICSCOPE_CONFIG": str(config)}
    where = ["--warehouse", str(fixture_warehouse)]
    for args in (
        ["status", *where],
        ["sql", "select 1", *where],
        ["rank", "-w", "llama3-8b", "--gpus", "64", *where],
        ["export", "--parquet", str(tmp_path / "out"), *where],
    ):
        done = fabricscope(*args, env=env)
        one_line(done, 2, "schedule", "unknown source 'no_such_source'")
        assert done.stdout == ""
    assert not (tmp_path / "out").exists()


def test_a_memory_cap_too_small_to_start_is_refused_at_start(fixture_warehouse):
    done = fabricscope(
        "sql", "select 1", "--warehouse", str(fixture_warehouse),
        env={"FABRICSCOPE_QUERY_MEMORY_LIMIT": "0B"},
    )  # fmt: skip
    one_line(done, 2, "query_memory_limit", "at least")


@pytest.mark.parametrize(
    "option",
    [
        ["--deadline-hours", "inf"],
        ["--deadline-days", "inf"],
        ["--deadline-days", "nan"],
        ["--max-budget", "inf"],
        ["--time-weight", "nan"],
        ["--max-price-age-days", "inf"],
    ],
)
def test_rank_refuses_numbers_that_are_not_finite(fixture_warehouse, option):
    done = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", "64", *option, "--warehouse", str(fixture_warehouse)
    )
    one_line(done, 2, option[0], "finite")
    assert done.stdout == ""


def test_estimate_refuses_a_price_that_is_not_finite(tmp_path):
    done = fabricscope(
        "estimate", "-w", "llama3-8b", "--hardware", str(hardware(tmp_path)),
        "--usd-per-gpu-hour", "inf",
    )  # fmt: skip
    one_line(done, 2, "--usd-per-gpu-hour", "finite")


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("tp", "each part is name=value"),
        ("tp=8,pp", "each part is name=value"),
        (f"tp={HUGE}", "tp must be a whole number"),
        (f"tp=8,first={HUGE}", "first must be a whole number"),
    ],
)
def test_a_malformed_layout_is_one_readable_line(tmp_path, layout, message):
    done = fabricscope(
        "estimate", "-w", "llama3-8b", "--hardware", str(hardware(tmp_path)), "--layout", layout
    )
    line = one_line(done, 2, message)
    assert "dictionary update" not in line and "int_max_str_digits" not in line


def test_a_5000_digit_number_in_a_file_is_one_readable_line(tmp_path):
    done = fabricscope("estimate", "-w", "llama3-8b", "--hardware", str(hardware(tmp_path, HUGE)))
    line = one_line(done, 2, "5,000 digits is too large")
    assert "set_int_max_str_digits" not in line
    workload = tmp_path / "w.json"
    workload.write_text(f'{{"preset": "llama3-8b", "tokens": {HUGE}}}')
    done = fabricscope("estimate", "-w", str(workload), "--hardware", str(hardware(tmp_path)))
    one_line(done, 2, "too large")


def test_a_5000_digit_gpu_count_is_one_short_line(fixture_warehouse):
    done = fabricscope(
        "rank", "-w", "llama3-8b", "--gpus", HUGE, "--warehouse", str(fixture_warehouse)
    )
    one_line(done, 2)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: Path("/dev/zero"), "not a regular file"),
        (lambda tmp: tmp, "not a regular file"),
        (lambda tmp: tmp / "missing.sql", "no such file"),
    ],
)
def test_a_query_file_that_is_no_text_file_says_what_it_is(
    fixture_warehouse, tmp_path, make, message
):
    done = fabricscope("sql", "--file", str(make(tmp_path)), "--warehouse", str(fixture_warehouse))
    one_line(done, 2, message)


def test_a_query_file_with_nul_bytes_is_not_text(fixture_warehouse, tmp_path):
    query = tmp_path / "q.sql"
    query.write_bytes(b"select 1\0\0\0")
    done = fabricscope("sql", "--file", str(query), "--warehouse", str(fixture_warehouse))
    one_line(done, 2, "not a text file")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_a_huge_column_name_is_cut_in_every_format(fixture_warehouse, tmp_path, fmt):
    query = tmp_path / "wide.sql"
    query.write_text(f'select 1 as "{"x" * 900_000}"')
    done = fabricscope(
        "sql", "--file", str(query), "--format", fmt, "--warehouse", str(fixture_warehouse)
    )
    assert done.returncode == 0, done.stderr[:500]
    assert len(done.stdout) < 2_000  # a table folds a header into its width
    assert fmt == "table" or "more characters]" in done.stdout


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_control_characters_are_never_written_raw(fixture_warehouse, fmt):
    query = "select chr(27) || '[2J' || chr(7) || 'evil' as \"p\x1b[31m\", chr(155) as q"
    done = fabricscope("sql", query, "--format", fmt, "--warehouse", str(fixture_warehouse))
    assert done.returncode == 0, done.stderr
    assert not any((ord(c) < 32 and c not in "\r\n") or 127 <= ord(c) < 160 for c in done.stdout)
    if fmt == "json":
        [row] = json.loads(done.stdout)
        assert row["p\\x1b[31m"] == "\\x1b[2J\\x07evil"
