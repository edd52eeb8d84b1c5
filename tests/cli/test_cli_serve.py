"""`fabricscope estimate --serve` and `fabricscope rank --serve` (issue 36), through the real
console script."""

from __future__ import annotations

import csv
import io
import json

from fabricscope.rank.estimators import SERVING
from fabricscope.rank.ranking import ranked_columns
from tests.helpers import fabricscope

WIDE = {"COLUMNS": "250"}
HARDWARE = json.dumps(
    [
        {
            "gpu_model": "H100 SXM",
            "gpu_count": 16,
            "gpus_per_node": 8,
            "fabric_class": fabric,
            "fabric_gbps_per_gpu": gbps,
        }
        for fabric, gbps in (("ethernet", 100), ("infiniband", 400))
    ]
)


def test_estimate_serve_prices_a_million_tokens_and_says_when_the_fabric_matters(tmp_path):
    hardware = tmp_path / "hw.json"
    hardware.write_text(HARDWARE)
    done = fabricscope(
        "estimate",
        "--serve",
        "-w",
        "llama3-405b-bf16",
        "--hardware",
        str(hardware),
        "--usd-per-gpu-hour",
        "2.5",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    ethernet, infiniband = json.loads(done.stdout)
    assert ethernet["layout"].startswith("TP8 x PP2") and ethernet["multi_node"]
    assert ethernet["tpot_ms"] > infiniband["tpot_ms"]
    assert ethernet["verdict"].startswith("multi-node serving: the fabric costs")
    # the GPUs that carry the load are paid for by its tokens, input and output
    for row in (ethernet, infiniband):
        assert row["gpus_needed"] % 16 == 0
        per_hour = (
            (
                row["usd_per_million_output_tokens"] * 512
                + row["usd_per_million_input_tokens"] * 2048
            )
            * 2
            * 3600
            / 1e6
        )
        assert abs(per_hour - row["gpus_needed"] * 2.5) < 1e-6
    table = fabricscope(
        "estimate",
        "--serve",
        "-w",
        "llama3-70b-chat",
        "--hardware",
        str(hardware),
        "--layout",
        "tp=4",
        env=WIDE,
    )
    assert table.returncode == 0, table.stderr
    # the layout short, the verdict as the fabric's share or "1 node" (in full in json)
    rows = [line for line in table.stdout.splitlines() if line.startswith(("1 ", "2 "))]
    assert len(rows) == 2
    for row in rows:
        assert "TP4xPP1 b" in row and row.rstrip().endswith("1 node")
    assert "--usd-per-gpu-hour prices each million tokens" in " ".join(table.stdout.split())


def test_estimate_serve_takes_experts_across_nodes_a_mix_and_a_percentile(tmp_path):
    hardware = tmp_path / "hw.json"
    hardware.write_text(HARDWARE)
    base = ["estimate", "--serve", "--hardware", str(hardware), "--format", "json"]
    done = fabricscope(*base, "-w", "deepseek-v3-chat", "--attention-dp")
    assert done.returncode == 0, done.stderr
    ethernet, infiniband = json.loads(done.stdout)
    # 16-way experts over two nodes on InfiniBand; on 100 Gb/s Ethernet the all-to-all costs
    # more than two pipeline stages' hops
    assert infiniband["layout"].startswith("DEP16, batch")
    assert infiniband["expert_parallel_across"] and infiniband["multi_node"]
    assert ethernet["tokens_per_s_per_gpu"] < infiniband["tokens_per_s_per_gpu"]
    mixed = fabricscope(
        *base,
        "-w",
        "llama3-70b-chat",
        "--disaggregated",
        "--mix",
        "500/100:0.75,8000/1000:0.25",
        "--percentile",
        "p50",
    )
    assert mixed.returncode == 0, mixed.stderr
    for row in json.loads(mixed.stdout):
        assert row["disaggregated"] and row["layout"].endswith("prefill apart")
        assert row["ttft_ms_at_percentile"] > row["ttft_ms"]  # the longest prompt's
    note = fabricscope(
        *base[:-2], "-w", "llama3-70b-chat", "--mix", "500/100:0.75,8000/1000:0.25", env=WIDE
    )
    assert note.returncode == 0, note.stderr
    said = " ".join(note.stdout.split())
    assert "75% 500/100, 25% 8,000/1,000; means 2,375/325" in said
    assert "(latencies at p99)" in said


def test_rank_serve_ranks_offers_by_the_cost_of_carrying_the_load(fixture_warehouse):
    args = ["rank", "--serve", "-w", "llama3-70b-chat", "--warehouse", str(fixture_warehouse)]
    done = fabricscope(*args, "--format", "json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    offers = payload["offers"]
    assert offers and payload["request"]["gpu_counts"][0] == 1
    assert all(o["capacity_requests_per_s"] >= 10 for o in offers)
    costs = [o["total_cost_usd"] for o in offers]
    assert costs == sorted(costs)
    table = fabricscope(*args, "--requests-per-s", "3", env=WIDE)
    assert table.returncode == 0, table.stderr
    assert "USD/M out" in table.stdout and "3 requests/s" in table.stdout
    # the tokens each GPU serves, as the same ranking's JSON has them (one node: no range)
    same = json.loads(fabricscope(*args, "--requests-per-s", "3", "--format", "json").stdout)
    assert "tok/s/GPU" in table.stdout
    assert f"{same['offers'][0]['tokens_per_s_per_gpu']:,.0f}" in table.stdout
    rows = list(csv.reader(io.StringIO(fabricscope(*args, "--format", "csv").stdout)))
    # the estimator's columns and, after the cost, the serving error band (its annotations)
    assert rows[0] == ranked_columns(SERVING)


def test_serve_flags_and_presets_of_the_other_kind_are_one_line_errors(tmp_path):
    cases = [
        (["rank", "-w", "llama3-70b-chat", "--gpus", "8"], "a serving preset: add --serve"),
        (["rank", "--serve", "-w", "llama3-70b"], "a training preset; serving presets:"),
        (["rank", "--serve", "-w", "llama3-70b-chat", "--deadline-days", "3"], "no deadline"),
        (
            ["rank", "-w", "llama3-70b", "--gpus", "8", "--tpot-ms", "50"],
            "--tpot-ms: for a serving",
        ),
        (["rank", "-w", "llama3-70b"], "--gpus: give a count"),
        (
            [
                "rank",
                "--serve",
                "-w",
                "llama3-70b-chat",
                "--output-tokens-per-s",
                "512",
                "--requests-per-s",
                "3",
            ],
            "serving workload: requests_per_s 3 and output_tokens_per_s 512 disagree",
        ),
        (
            ["rank", "--serve", "-w", "llama3-70b-chat", "--requests-per-s", "-1"],
            "--requests-per-s",
        ),
        (
            ["rank", "--serve", "-w", "llama3-70b-chat", "--percentile", "p90"],
            "--percentile: Input should be 'mean', 'p50' or 'p99'",
        ),
        (
            ["rank", "--serve", "-w", "llama3-70b-chat", "--mix", "500/100:0.5"],
            "serving workload: the mix's shares sum to 0.5, not 1",
        ),
        (
            ["rank", "--serve", "-w", "llama3-70b-chat", "--mix", "500:1"],
            "--mix: '500:1' is not prompt/output:share",
        ),
        (["rank", "-w", "llama3-70b", "--gpus", "8", "--percentile", "p50"], "--percentile: for"),
        (
            [
                "estimate",
                "--serve",
                "-w",
                "llama3-70b-chat",
                "--hardware",
                "x.json",
                "--layout",
                "dp=2",
            ],
            "for --serve give tp=N[,pp=M]",
        ),
    ]
    for args, message in cases:
        done = fabricscope(*args, "--warehouse", str(tmp_path / "none.duckdb"))
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
