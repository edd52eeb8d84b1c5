"""A served model's error band (fabricscope/model/error_bands.py, SERVING) in `fabricscope
estimate --serve` and `rank --serve`, in every format, and the serving tables (`rank --serve`,
its `--what-if-fabric`, `estimate --serve`) reading a row a line at 200 columns, through the
real console script."""

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
# DeepSeek-V3 served attention data-parallel, prefill on GPUs apart: on 32 H100s a replica
# spans nodes (over each fabric), on 8 B200s it fits one node, on 8 A100 40GBs none fits
PROFILES = [
    *(
        {
            "gpu_model": "H100 SXM",
            "gpu_count": 32,
            "gpus_per_node": 8,
            "fabric_class": fabric,
            "fabric_gbps_per_gpu": gbps,
        }
        for fabric, gbps in (("ethernet", 12.5), ("infiniband", 400))
    ),
    {"gpu_model": "B200-SXM-180GB", "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"},
    {"gpu_model": "A100-SXM-40GB", "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"},
]
DISAGGREGATED = [
    *("estimate", "--serve", "-w", "deepseek-v3-chat", "--attention-dp", "--disaggregated"),
    *("--requests-per-s", "5", "--usd-per-gpu-hour", "2.5"),
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


def a_row_a_line(text: str, numbers: list[int]) -> tuple[str, list[str], list[str]]:
    """That no line of ``text`` is wider than 200 characters (not bytes: the rule is "─") and
    its table reads a row a line, each row by its number in order, the first line under it a
    note (not a cell folded over); the header, the rows' lines and the lines under the table."""
    assert max(len(line) for line in text.splitlines()) <= 200
    (header, _rule, *body), notes = table_rows(text, len(numbers))
    assert [line.split()[0] for line in body] == [str(number) for number in numbers]
    assert notes[0].strip() and not notes[0].startswith(" "), notes[0]
    return header, body, notes


def said_of(number: int, text: str) -> re.Pattern[str]:
    """A line under a table that says ``text`` of row ``number`` (rows alike share it)."""
    return re.compile(rf"(#\d+, )*#{number}(, #\d+)*: {re.escape(flat(text))}")


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
        header, _body, notes = a_row_a_line(text, [o["rank"] for o in offers])
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
        verdict = f"{offer['verdict']} (fabric as estimated: {offer['fabric_estimated_as']})"
        assert said_of(offer["rank"], verdict).search(said), offer["rank"]
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


def test_estimate_serve_reads_a_row_a_line_at_200_columns(tmp_path):
    hardware = tmp_path / "hw.json"
    hardware.write_text(json.dumps(PROFILES))
    args = [*DISAGGREGATED, "--hardware", str(hardware)]
    profiles = json.loads(run(*args, "--format", "json"))
    spanning, one_node, unfit = profiles[0], profiles[2], profiles[3]
    # json keeps every field as it was: the layout and the verdict in full
    assert spanning["layout"].startswith("DEP8 x PP2, batch ")
    assert spanning["layout"].endswith(", prefill apart")
    assert spanning["verdict"].startswith("multi-node serving: the fabric costs")
    assert one_node["verdict"] == "the fabric does not matter: fits one node"
    assert unfit["verdict"] is None
    text = run(*args, env=NARROW)
    header, body, notes = a_row_a_line(text, [1, 2, 3, 4])
    for short in ("#", "GPU", "layout", "fabric share", "USD/M out", "± (held out)"):
        assert short in header
    said = flat("\n".join(notes))
    for number, (profile, line) in enumerate(zip(profiles, body, strict=True), 1):
        if profile["verdict"] is None:  # the cell says nothing; the line under says why
            assert line.split()[-3:] == ["—"] * 3
            assert said_of(number, "no replica fits and meets the targets").search(said)
        elif profile["multi_node"]:  # the fabric's share; the verdict in full below
            layout = profile["layout"].replace(" x ", "x").replace(", batch ", " b")
            assert layout.replace(", prefill apart", " +P") in line
            assert f"  {profile['fabric_share']:.0%}  " in line
            assert said_of(number, profile["verdict"]).search(said), number
        else:
            assert "  1 node  " in line
            assert f"#{number}:" not in said
    assert flat(notes[0]).startswith("1,024 prompt and 1,024 output tokens per request")
    assert "fabric share: '1 node' where a replica fits one node" in said
    assert SERVING_FABRIC_CAVEAT in said


def test_the_serving_what_if_reads_a_row_a_line_at_200_columns(fixture_warehouse):
    where = ["--warehouse", str(fixture_warehouse)]
    for args in (SERVE, SPANNING):
        what_if = [*args, *where, "--what-if-fabric", "ethernet", "--top", "0"]
        rows = json.loads(run(*what_if, "--format", "json"))["what_if"]
        text = run(*what_if, env=NARROW)
        header, body, notes = a_row_a_line(text, [row["rank"] for row in rows])
        for short in ("GPU", "tok/s/GPU now", "USD/M", "fabric"):
            assert short in header
        said = flat("\n".join(notes))
        assert "fabric: '1 node' where a replica fits one node" in said
        for row, line in zip(rows, body, strict=True):
            # the last column: the what-if's verdict and fabric as "1 node" or the share
            verdict = row["verdict_what_if"]
            if row["what_if_note"] is not None:
                assert "not ranked" in line and line.rstrip().endswith("—")
                note = f"not ranked with ethernet: {row['what_if_note']}"
                assert said_of(row["rank"], note).search(said), row["rank"]
            elif verdict.startswith("multi-node serving"):
                assert line.rstrip().endswith(f"{row['fabric_share_what_if']:.0%}")
                text_in_full = f"with ethernet: {verdict} (fabric now, as estimated: "
                assert said_of(row["rank"], text_in_full + f"{row['fabric_now']})").search(said)
            else:
                assert line.rstrip().endswith("1 node")
    # the spanning ranking has offers of every kind: so each branch above was taken
    assert {row["what_if_note"] is None for row in rows} == {True, False}
    assert any(str(row["verdict_what_if"]).startswith("multi-node") for row in rows)
    assert SERVING_FABRIC_CAVEAT in said
