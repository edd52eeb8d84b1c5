"""What the command line's tables show a person: whole numbers at 100 columns, days not hours,
the first 20 offers, "—" for unknown; JSON and CSV keep the raw fields."""

from __future__ import annotations

import io
import json
import re

import pytest

from fabricscope import cli
from tests.helpers import fabricscope

RANK = ["rank", "-w", "llama3-70b", "--gpus", "512"]
NARROW = {"COLUMNS": "100"}
WIDE = {"COLUMNS": "250"}  # one line per row, whatever terminal the tests run under


def rank(warehouse, *args, env=None):
    done = fabricscope(*RANK, *args, "--warehouse", str(warehouse), env=env)
    assert done.returncode == 0, done.stderr
    return done


def lines_holding(text: str, token: str) -> list[str]:
    """The lines where ``token`` stands whole: not part of a longer number."""
    pattern = re.compile(rf"(?<![\d,.]){re.escape(token)}(?![\d,.])")
    return [line for line in text.splitlines() if pattern.search(line)]


def test_a_ranking_at_100_columns_shows_every_number_whole(fixture_warehouse):
    offers = json.loads(rank(fixture_warehouse, "--format", "json").stdout)["offers"]
    table = rank(fixture_warehouse, env=NARROW).stdout
    assert max(len(line) for line in table.splitlines()) <= 100
    assert len(offers) > 20
    for offer in offers[:20]:
        days = [f"{offer[k] / 24:,.1f}" for k in ("time_to_train_h_low", "time_to_train_h")]
        costs = [f"{offer[k]:,.0f}" for k in ("total_cost_usd_low", "total_cost_usd")]
        for token in {*days, *costs}:
            assert lines_holding(table, token), (token, offer["offer_key"])
    # days with one decimal and whole dollars only: no hours, no raw fractions, no NULL
    assert "NULL" not in table and "time_to_train_h" not in table
    assert not re.search(r"\d\.\d{4}", table)


def test_a_table_shows_20_offers_and_says_how_to_see_the_rest(fixture_warehouse):
    offers = json.loads(rank(fixture_warehouse, "--format", "json").stdout)["offers"]
    table = rank(fixture_warehouse, env=WIDE).stdout
    assert f"showing 20 of {len(offers)} offers: --top 0 shows all" in table
    listed = [line for line in table.splitlines() if re.match(r"\s*\d+\s{2}", line)]
    assert [int(line.split()[0]) for line in listed] == list(range(1, 21))
    everything = rank(fixture_warehouse, "--top", "0", env=WIDE).stdout
    assert "showing" not in everything
    assert lines_holding(everything, offers[-1]["provider"])
    # machine formats keep every row unless --top is given
    csv_rows = rank(fixture_warehouse, "--format", "csv").stdout.strip().splitlines()
    assert len(csv_rows) == len(offers) + 1
    first = json.loads(rank(fixture_warehouse, "--format", "json", "--top", "3").stdout)
    assert [r["offer_key"] for r in first["offers"]] == [r["offer_key"] for r in offers[:3]]


def test_deadlines_are_given_in_days(fixture_warehouse):
    in_days = json.loads(rank(fixture_warehouse, "--deadline-days", "300", "-f", "json").stdout)
    assert in_days["request"]["deadline_hours"] == 300 * 24
    old = rank(fixture_warehouse, "--deadline-hours", "7200", "-f", "json")
    assert json.loads(old.stdout)["offers"] == in_days["offers"]
    assert "--deadline-hours is deprecated; use --deadline-days" in old.stderr
    for bad in (["--deadline-days", "3", "--deadline-hours", "72"], ["--deadline-days", "0"]):
        done = fabricscope(*RANK, *bad, "--warehouse", str(fixture_warehouse))
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert "--deadline-days" in done.stderr


def test_an_estimate_shows_days_and_gpu_hours(tmp_path):
    hw = tmp_path / "hw.json"
    row = {"gpu_model": "H100 SXM", "gpu_count": 512, "gpus_per_node": 8}
    hw.write_text(json.dumps({**row, "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400}))
    args = ["estimate", "-w", "llama3-70b", "--hardware", str(hw)]
    done = fabricscope(*args, "--format", "json")
    [raw] = json.loads(done.stdout)
    table = fabricscope(*args, env=NARROW).stdout
    assert lines_holding(table, f"{raw['time_to_train_h'] / 24:,.1f}")
    assert lines_holding(table, f"{raw['gpu_hours']:,.0f}")
    assert lines_holding(table, f"{raw['mfu']:.0%}")
    assert "time_to_train_h" not in table and "GPU-hours" in table
    assert "x your price per GPU-hour" in table  # a profile has no price: how to get the cost
    csv_head = fabricscope(*args, "--format", "csv").stdout.splitlines()[0]
    assert "time_to_train_h" in csv_head.split(",")
    # with the buyer's price, the cost of the run: the GPU-hours of whole nodes times it
    priced = [*args, "--usd-per-gpu-hour", "2.5"]
    [costed] = json.loads(fabricscope(*priced, "--format", "json").stdout)
    assert costed["cost_usd"] == pytest.approx(raw["gpu_hours"] * 2.5)
    table = fabricscope(*priced, env=NARROW).stdout
    assert lines_holding(table, f"{costed['cost_usd']:,.0f}") and "$2.50 per GPU-hour" in table
    refused = fabricscope(*args, "--usd-per-gpu-hour", "-1")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1


@pytest.fixture
def narrow(monkeypatch):
    """The CLI's console at 100 columns, writing into a buffer."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "out", cli._PlainConsole(file=buffer, width=100, soft_wrap=True))
    return buffer


def test_a_wide_table_leaves_out_optional_columns_before_it_cuts_a_number(narrow):
    spare = f"{10**45:,}"  # a number column too wide to keep beside the others at 100
    columns = ["offer", "cost (USD)", "note", "spare"]
    rows = [["x" * 60, "12,345,678–23,456,789", "y " * 40, spare], ["a", None, "", 1]]
    cli.print_rows(columns, rows, cli.OutputFormat.TABLE, title="t", optional=["spare"])
    text = narrow.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert lines_holding(text, "12,345,678–23,456,789") and spare not in text
    assert "left out at 100 columns: spare" in text
    assert "—" in text and "None" not in text


def test_the_what_if_prints_the_change_beside_todays_fabric(fixture_warehouse):
    """rank --what-if-fabric shows each offer with the bandwidth it is costed at, the days,
    the change in time and cost from today's fabric and the exposed communication, and
    states the rule: the numbers the app's what-if table shows (ranking.what_if_changes)."""
    args = ["rank", "-w", "mixtral-8x7b", "--gpus", "512", "--min-fabric", "infiniband"]
    what_if = [*args, "--what-if-fabric", "ethernet", "--warehouse", str(fixture_warehouse)]
    done = fabricscope(*what_if, "--format", "json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    rows = payload["what_if"]
    assert rows and all(r["time_change"] > 0 for r in rows)
    assert "100 Gb/s per node" in payload["rule"]
    table = fabricscope(*what_if, env=NARROW)
    assert table.returncode == 0, table.stderr
    text = table.stdout
    assert "today's fabric and ethernet (what if)" in text
    assert "the change from today's fabric" in text and "100 Gb/s per node" in text
    for row in rows[:20]:
        assert lines_holding(text, f"{row['time_change']:+.0%}"), row["offer_key"]
        assert lines_holding(text, f"{row['cost_change_usd']:+,.0f}"), row["offer_key"]


def test_the_table_names_the_offer_its_gpus_and_who_sells_it(fixture_warehouse):
    """The offer as its label ("8x H100 SXM 80GB, ..."), GPUs per node among the first
    columns, and "sold by X, runs on Y" for a reseller's row; the raw id stays in csv/json."""
    offers = json.loads(rank(fixture_warehouse, "--format", "json").stdout)["offers"]
    resold = next(o for o in offers[:20] if o["sold_by"] != o["provider"])
    wide = rank(fixture_warehouse, env={"COLUMNS": "400"}).stdout
    header = next(line for line in wide.splitlines() if line.lstrip().startswith("#"))
    assert header.split()[:5] == ["#", "provider", "offer", "per", "node"]
    [line] = [line for line in wide.splitlines() if re.match(rf"\s*{resold['rank']}\s", line)]
    assert f"sold by {resold['sold_by']}, runs on {resold['provider']}" in line
    assert resold["offer_label"] in line and resold["instance_type"] not in wide
    # at 100 columns the label and the node size stay, the numbers whole (test above)
    narrow = rank(fixture_warehouse, env=NARROW).stdout
    assert "per node" in narrow and "sold by" in narrow
    assert "left out" in narrow and "per node" not in narrow.split("left out", 1)[1]
    csv_head = rank(fixture_warehouse, "--format", "csv").stdout.splitlines()[0].split(",")
    assert {"instance_type", "offer_label", "sold_by", "sold_and_run_by"} <= set(csv_head)


def test_every_training_time_and_cost_has_its_error_band_beside_it(fixture_warehouse, tmp_path):
    offers = json.loads(rank(fixture_warehouse, "--format", "json").stdout)["offers"]
    table = rank(fixture_warehouse, env=WIDE).stdout
    assert "± (held out)" in table.splitlines()[1]
    for offer in offers[:20]:
        assert offer["error_band_pct"] > 0 and offer["error_band_runs"] >= 10
        assert offer["time_to_train_h_band_high"] > offer["time_to_train_h"]
        line = next(line for line in lines_holding(table, offer["provider"]))
        assert f"±{offer['error_band_pct']:.0f}%" in table and line
    # one note per band shown: its percentile, its cell and its runs, which way it errs
    cells = {offer["error_band_cell"] for offer in offers[:20]}
    for cell in cells:
        assert f"for {cell}: the p90 of the held-out errors on" in " ".join(table.split())
    csv_head = rank(fixture_warehouse, "--format", "csv").stdout.splitlines()[0].split(",")
    assert {"error_band_pct", "error_bias_pct", "error_band_cell"} <= set(csv_head)
    # an estimate on a GPU of no known generation gets every run's band, labelled so
    hw = tmp_path / "hw.json"
    profile = {
        "gpu_count": 64,
        "gpus_per_node": 8,
        "fabric_class": "infiniband",
        "fabric_gbps_per_gpu": 400,
    }
    hw.write_text(
        json.dumps([{**profile, "gpu_model": gpu} for gpu in ("H100 SXM", "MI300X-OAM-192GB")])
    )
    args = ["estimate", "-w", "llama3-70b", "--hardware", str(hw)]
    hopper, amd = json.loads(fabricscope(*args, "--format", "json").stdout)
    assert hopper["error_band_cell"] == "Hopper BF16 dense on Megatron"
    assert amd["error_band_cell"].endswith("(the GPU's generation is not known)")
    assert amd["error_band_runs"] > hopper["error_band_runs"]
    assert "cost_usd_band_low" not in hopper  # no price given: no cost, no cost band
    text = " ".join(fabricscope(*args, env=WIDE).stdout.split())
    assert f"±{hopper['error_band_pct']:.0f}%" in text and "generation is not known" in text
