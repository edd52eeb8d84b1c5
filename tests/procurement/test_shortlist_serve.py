"""A serving shortlist (issue 36): the CSV, workbook and memo of a served model's best offers
speak of cost per million tokens, latency and the load carried, not of time to train."""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest

from fabricscope.model import error_bands
from fabricscope.model.workloads import load_serving_workload
from fabricscope.procurement import shortlist
from fabricscope.rank.estimators import SERVING
from fabricscope.rank.ranking import RankRequest, parse_gpu_counts, ranked_columns
from tests.helpers import fabricscope


@pytest.fixture(scope="module")
def written(fixture_warehouse, tmp_path_factory):
    job = load_serving_workload("llama3-405b-bf16")
    request = RankRequest(workload=job, gpu_counts=parse_gpu_counts("1-64"))
    picked = shortlist.build(fixture_warehouse, request, top=3)
    prefix = tmp_path_factory.mktemp("serve") / "llama405"
    return picked, shortlist.write(picked, prefix)


def test_the_csv_holds_the_serving_columns(written):
    picked, (csv, *_rest) = written
    read = pd.read_csv(csv)
    # the estimator's columns and, after the cost, the serving error band (its annotations)
    assert list(read.columns) == ranked_columns(SERVING)
    assert (read["usd_per_million_output_tokens"] > 0).all()
    assert list(read["offer_key"]) == list(picked.rows["offer_key"])


def test_the_workbook_shows_what_a_buyer_of_tokens_decides_on(written):
    _picked, (_csv, xlsx, *_rest) = written
    book = openpyxl.load_workbook(xlsx)
    headers = [cell.value for cell in book["shortlist"][1]]
    assert "Per million output tokens (USD)" in headers and "Time per output token (ms)" in headers
    assert not any("Time to train" in str(h) for h in headers)
    side = [row[0].value for row in book["side by side"].iter_rows(min_row=2)]
    assert "Per million tokens" in side and "Latency reached" in side
    sensitivity = [cell.value for cell in book["fabric sensitivity"][1]]
    assert "Time per output token on InfiniBand (ms)" in sensitivity


def test_the_memo_says_whether_the_fabric_matters_for_the_service(written):
    picked, (_csv, _xlsx, md, _answers) = written
    text = md.read_text(encoding="utf-8")
    assert text.startswith("# Procurement memo: Llama 3 405B (bf16) served at 2 requests/s")
    assert "| $/M output |" in text and "## What the fabric is worth for this service" in text
    assert "810 GB of weights" in text and "time to train" not in text.lower()
    verdicts = set(picked.rows["verdict"])
    assert any(v in text for v in verdicts)
    # a replica inside one node is the same on both fabrics
    one_node = picked.sensitivity[picked.rows["verdict"].str.startswith("the fabric does not")]
    assert len(one_node) > 0
    assert (one_node["tpot_ms_infiniband"] == one_node["tpot_ms_ethernet"]).all()


def test_export_shortlist_serve_writes_the_files(fixture_warehouse, tmp_path):
    done = fabricscope(
        "export", "--shortlist", "--serve", "-w", "llama3-70b-chat", "--top", "2",
        "-o", str(tmp_path / "chat"), "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    memo = (tmp_path / "chat.md").read_text(encoding="utf-8")
    assert "served at 10 requests/s" in memo and "fits one node" in memo


def test_the_memo_states_a_mix_its_percentile_and_how_the_service_is_laid_out(
    fixture_warehouse, tmp_path
):
    spec = tmp_path / "mixed.json"
    spec.write_text(
        '{"name": "Llama 3 70B, mixed prompts", "architecture": "llama3-70b", "weights": "fp8",'
        ' "kv_cache": "fp8", "mix": [{"input_tokens": 500, "output_tokens": 100, "share": 0.75},'
        ' {"input_tokens": 8000, "output_tokens": 1000, "share": 0.25}], "requests_per_s": 2,'
        ' "ttft_ms": 3000, "tpot_ms": 100, "latency_percentile": "p50", "disaggregated": true}',
        encoding="utf-8",
    )
    done = fabricscope(
        "export", "--shortlist", "--serve", "-w", str(spec), "--top", "2",
        "-o", str(tmp_path / "mixed"), "--warehouse", str(fixture_warehouse),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    memo = " ".join((tmp_path / "mixed.md").read_text(encoding="utf-8").split())
    assert "a mix of prompt/output tokens per request (75% 500/100, 25% 8,000/1,000" in memo
    assert "means 2,375/325" in memo and "targets (at p50): time to first token 3,000 ms" in memo
    assert "prefill and decode on separate GPUs" in memo
    assert "latencies at p50: the model's means times the ratio MLPerf's runs measured" in memo


def test_the_memo_and_workbook_carry_the_serving_error_band(written):
    picked, (_csv, xlsx, md, _answers) = written
    text = md.read_text(encoding="utf-8")
    assert "| $/M input | tok/s per GPU | ± (held out) |" in text
    for _, row in picked.rows.iterrows():
        [line] = [x for x in text.splitlines() if f"(`{row['instance_type']}`," in x]
        assert f"| ±{row['error_band_pct']:.0f}% |" in line
    assert "## How far to trust the throughput and the price per token" in text
    for note in error_bands.notes(picked.rows.to_dict("records"), error_bands.SERVING):
        assert f"- {note[0].upper()}{note[1:]}." in text
    first = picked.rows.iloc[0]
    assert (
        f"{first['tokens_per_s_per_gpu_band_low']:,.0f}-{first['tokens_per_s_per_gpu_band_high']:,.0f}"
        " output tokens/s per GPU"
    ) in text
    book = openpyxl.load_workbook(xlsx)
    headers = [cell.value for cell in book["shortlist"][1]]
    assert "Error band, held out (± %, p90)" in headers and "Output tokens/s per GPU" in headers
    details = [cell.value for cell in book["details"][1]]
    assert "Output tokens/s per GPU, error band's low end" in details
    assert "Per million output tokens, error band's high end (USD)" in details
    side = [row[0].value for row in book["side by side"].iter_rows(min_row=2)]
    assert "Error band (held out)" in side
