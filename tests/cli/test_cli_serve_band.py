"""A served model's error band (fabricscope/model/error_bands.py, SERVING) in `fabricscope
estimate --serve` and `rank --serve`, in every format, and `rank --serve`'s table reading a
row a line at 200 columns, through the real console script."""

from __future__ import annotations

import csv
import io
import json
import re

from fabricscope.model import error_bands
from fabricscope.model.error_bands import SERVING_FABRIC_CAVEAT, SERVING_RANGE_FIELDS
from fabricscope.model.workloads import load_serving_workload
from tests.helpers import fabricscope

NARROW = {"COLUMNS": "200"}
SERVE = ["rank", "--serve", "-w", "llama3-70b-chat"]
# DeepSeek-V3 served attention data-parallel: on H100s a replica spans nodes
SPANNING = ["rank", "--serve", "-w", "deepseek-v3-chat", "--attention-dp", "--requests-per-s", "20"]
HARDWARE = [
    {
        "gpu_model": "H100 SXM",
        "gpu_count": 8,
        "gpus_per_node": 8,
        "fabric_class": "none",
        "fabric_gbps_per_gpu": 0,
    },
    {"gpu_model": "MI300X", "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"},
]


def run(*args: str, env: dict[str, str] | None = None) -> str:
    done = fabricscope(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def flat(text: str) -> str:
    return " ".join(text.split())


def table_rows(text: str, shown: int) -> tuple[list[str], list[str]]:
    """The table's header and ``shown`` body lines, and the lines after them."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"─"})
    return lines[rule - 1 : rule + 1 + shown], lines[rule + 1 + shown :]


def test_rank_serve_carries_the_band_in_json_csv_and_the_table(fixture_warehouse):
    where = ["--warehouse", str(fixture_warehouse)]
    offers = json.loads(run(*SERVE, *where, "--format", "json"))["offers"]
    job = load_serving_workload("llama3-70b-chat")
    assert offers
    for row in offers:
        band = error_bands.serving_band_for(row["gpu_model"], job)
        assert band is not None
        assert (row["error_band_pct"], row["error_bias_pct"]) == (band.percent, band.bias_percent)
        assert (row["error_band_runs"], row["error_band_cell"]) == (band.runs, band.label)
        share = band.percent / 100
        assert (
            abs(row["tokens_per_s_per_gpu_band_low"] - row["tokens_per_s_per_gpu"] / (1 + share))
            < 1e-6 * row["tokens_per_s_per_gpu"]
        )
        assert (
            abs(
                row["usd_per_million_output_tokens_band_high"]
                - row["usd_per_million_output_tokens"] * (1 + share)
            )
            < 1e-9 + 1e-6 * row["usd_per_million_output_tokens"]
        )
    rows = list(csv.DictReader(io.StringIO(run(*SERVE, *where, "--format", "csv"))))
    assert len(rows) == len(offers)
    for name in (*error_bands.FIELDS, *SERVING_RANGE_FIELDS):
        assert rows[0][name] != "", name
    assert rows[0]["error_band_cell"] == offers[0]["error_band_cell"]
    # the table: the band beside each offer, what it means below
    text = run(*SERVE, *where, env=NARROW)
    (header, _rule, *body), notes = table_rows(text, min(20, len(offers)))
    assert "± (held out)" in header
    for row, line in zip(offers, body, strict=False):
        assert line.split()[0] == str(row["rank"])
        assert f"±{row['error_band_pct']:.0f}%" in line
    said = flat("\n".join(notes))
    for sentence in error_bands.notes(offers[:20], error_bands.SERVING):
        assert f"± (held out): {sentence}" in said
    assert "output tokens/s per GPU at the latency target typically within" in said


def test_rank_serve_reads_a_row_a_line_at_200_columns(fixture_warehouse):
    where = ["--warehouse", str(fixture_warehouse)]
    for args in (SERVE, SPANNING):
        offers = json.loads(run(*args, *where, "--top", "0", "--format", "json"))["offers"]
        text = run(*args, *where, "--top", "0", env=NARROW)
        assert max(len(line) for line in text.splitlines()) <= 200
        (header, _rule, *body), notes = table_rows(text, len(offers))
        # one line per offer, in rank order, and no folded line between them or after them
        assert [line.split()[0] for line in body] == [str(o["rank"]) for o in offers]
        assert not notes[0].startswith(" "), notes[0]  # the first note, not a folded cell
        assert flat(notes[0]).startswith(flat(load_serving_workload(args[3]).lengths_text()))
        said = flat("\n".join(notes))
        assert "GPU: the offer's GPU" in said and "fabric: '1 node'" in said
        for short in ("tok/s/GPU", "fabric", "± (held out)"):
            assert short in header
    # each offer whose replica spans nodes has its verdict and fabric in full under the table
    # (offers alike share a line: "#41, #52: multi-node serving: ... (fabric as estimated: ...)")
    spanning = [o for o in offers if o["verdict"].startswith("multi-node serving")]
    assert spanning
    for offer in spanning:
        said_of = re.compile(
            rf"(#\d+, )*#{offer['rank']}(, #\d+)*: {re.escape(flat(offer['verdict']))} "
            rf"\(fabric as estimated: {re.escape(flat(offer['fabric_estimated_as']))}\)"
        )
        assert said_of.search(said), offer["rank"]
    assert SERVING_FABRIC_CAVEAT in said


def test_estimate_serve_shows_the_band_in_every_format(tmp_path):
    hardware = tmp_path / "hw.json"
    hardware.write_text(json.dumps(HARDWARE))
    base = ["estimate", "--serve", "-w", "llama3-70b-chat", "--hardware", str(hardware)]
    hopper, amd = json.loads(run(*base, "--usd-per-gpu-hour", "2", "--format", "json"))
    assert hopper["error_band_cell"] == "Hopper FP8 dense"
    assert amd["error_band_cell"].startswith("MI300X-OAM-192GB")
    for row in (hopper, amd):
        share = row["error_band_pct"] / 100
        assert (
            abs(
                row["tokens_per_s_per_gpu_band_low"] * (1 + share) / row["tokens_per_s_per_gpu"] - 1
            )
            < 1e-9
        )
        assert (
            abs(
                row["usd_per_million_output_tokens_band_high"]
                / row["usd_per_million_output_tokens"]
                - (1 + share)
            )
            < 1e-9
        )
    # a band of 100% or more bounds the tokens from below only
    assert amd["error_band_pct"] < 100 or amd["tokens_per_s_per_gpu_band_high"] is None
    rows = list(csv.DictReader(io.StringIO(run(*base, "--format", "csv"))))
    assert rows[0]["error_band_pct"] == f"{hopper['error_band_pct']:g}"
    assert "usd_per_million_output_tokens_band_low" not in rows[0]  # no price, no price's band
    text = run(*base, env=NARROW)
    assert "± (held out)" in text and f"±{hopper['error_band_pct']:.0f}%" in text
    said = flat(text)
    assert (
        f"for Hopper FP8 dense: the p90 of the held-out errors on {hopper['error_band_runs']}"
        in said
    )
