"""`fabricscope rank --serve --what-if-fabric` (issue 36): today's ranking of a served model
and the same offers with another fabric, in every format, through the real console script."""

from __future__ import annotations

import csv
import io
import json
import re

from fabricscope.rank.ranking import SERVING_WHAT_IF_COLUMNS
from tests.helpers import fabricscope

WIDE = {"COLUMNS": "300"}
ONE_NODE = "the fabric does not matter: fits one node"
# DeepSeek-V3 served attention data-parallel, its experts over every GPU of a replica: on
# H100s a replica spans nodes, on B200s it fits one
SERVE = ["rank", "--serve", "-w", "deepseek-v3-chat", "--attention-dp", "--requests-per-s", "20"]


def run(warehouse, *args, env=None):
    done = fabricscope(*SERVE, "--warehouse", str(warehouse), *args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_serving_what_if_prints_tokens_and_price_beside_todays_fabric(fixture_warehouse):
    payload = json.loads(run(fixture_warehouse, "--what-if-fabric", "ethernet", "--format", "json"))
    assert payload["what_if_fabric"] == "ethernet"
    assert "A replica inside one node does not change" in payload["rule"]
    rows = payload["what_if"]
    today = json.loads(run(fixture_warehouse, "--format", "json"))["offers"]
    assert [r["offer_key"] for r in rows] == [o["offer_key"] for o in today]
    one_node = [r for r in rows if r["verdict"] == ONE_NODE]
    spanning = [r for r in rows if r["tokens_change"] is not None and r["tokens_change"] < 0]
    assert one_node and spanning
    for row in one_node:  # a replica inside one node reads the same on any fabric
        assert row["tokens_change"] == 0 and row["usd_per_million_change"] == 0
        assert row["verdict_what_if"] == ONE_NODE
    for row in spanning:  # experts across nodes over plain Ethernet serve less, for more
        assert row["verdict_what_if"].startswith("multi-node serving: the fabric costs")
        assert row["fabric_what_if"].startswith("ethernet at ")
        assert row["usd_per_million_output_tokens_what_if"] > row["usd_per_million_output_tokens"]
    # the table: today's and the what-if's tokens/s per GPU and price, and the change
    text = run(fixture_warehouse, "--what-if-fabric", "ethernet", "--top", "0", env=WIDE)
    assert "today's fabric and ethernet (what if)" in text
    changed = len(rows) - len(one_node) - sum(r["what_if_note"] is not None for r in rows)
    summary = " ".join(text.split())
    assert f"{changed:,} of {len(rows):,} offers change with ethernet" in summary
    assert "tok/s and USD/M: the change from today's fabric" in summary
    for row in spanning[:5]:
        [line] = [x for x in text.splitlines() if re.match(rf"\s*{row['rank']}\s", x)]
        assert f"{row['tokens_change']:+.0%}" in line
        assert f"{row['usd_per_million_change']:+.0%}" in line
        assert f"{row['tokens_per_s_per_gpu_what_if']:,.0f}" in line
    # csv: every row, the what-if's columns
    table = list(
        csv.reader(
            io.StringIO(run(fixture_warehouse, "--what-if-fabric", "ethernet", "--format", "csv"))
        )
    )
    assert table[0] == SERVING_WHAT_IF_COLUMNS and len(table) == len(rows) + 1


def test_a_bad_what_if_fabric_for_a_served_model_is_a_one_line_error(tmp_path):
    cases = [
        (["--what-if-fabric", "warp"], "--what-if-fabric 'warp': a fabric that joins nodes"),
        (["--what-if-fabric", "none"], "--what-if-fabric 'none': a fabric that joins nodes"),
    ]
    for args, message in cases:
        done = fabricscope(*SERVE, *args, "--warehouse", str(tmp_path / "none.duckdb"))
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
