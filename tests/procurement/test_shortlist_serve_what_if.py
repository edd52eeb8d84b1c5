"""The memo of a served model carries the fabric "what if" as `rank --serve --what-if-fabric`
computes it (issue 36): output tokens/s per GPU, USD per million output tokens and TPOT on
InfiniBand and on plain Ethernet, for the shortlisted offers."""

from __future__ import annotations

import pandas as pd

from fabricscope.procurement import shortlist
from fabricscope.procurement.shortlist import FABRIC_NAMES
from fabricscope.rank.ranking import rank_offers, what_if_changes
from tests.rank.test_serving_rank import offers, serve


def test_the_memo_and_workbook_carry_the_serving_what_if(tmp_path):
    # DeepSeek-V3 with its experts over the 16 GPUs of two nodes; a one-node model beside it
    spanning = rank_offers(
        offers("infiniband"),
        serve("deepseek-v3-chat", (16,), attention_data_parallel=True, requests_per_s=None),
    )
    picked = shortlist.from_result(spanning, top=1)
    as_ethernet = what_if_changes(spanning, spanning.what_if("ethernet")).iloc[0]
    row = picked.sensitivity.iloc[0]
    assert row["tokens_per_s_per_gpu_ethernet"] == as_ethernet["tokens_per_s_per_gpu_what_if"]
    assert (
        row["usd_per_million_output_tokens_ethernet"]
        == as_ethernet["usd_per_million_output_tokens_what_if"]
    )
    assert row["tokens_per_s_per_gpu_ethernet"] < row["tokens_per_s_per_gpu_infiniband"]
    assert (
        row["usd_per_million_output_tokens_ethernet"]
        > row["usd_per_million_output_tokens_infiniband"]
    )
    text = shortlist.memo(picked)
    assert "`fabricscope rank --serve --what-if-fabric`" in text
    assert "ethernet at 100 Gb/s per node" in text
    ib, eth = row["tokens_per_s_per_gpu_infiniband"], row["tokens_per_s_per_gpu_ethernet"]
    [line] = [x for x in text.splitlines() if x.startswith("| infiniband |")]
    assert f"| {ib:,.0f} | {eth:,.0f} |" in line
    # the workbook's fabric sensitivity sheet, headed in words
    _csv, xlsx, *_rest = shortlist.write(picked, tmp_path / "deepseek")
    sheet = pd.read_excel(xlsx, sheet_name="fabric sensitivity")
    for name in FABRIC_NAMES.values():
        assert f"Output tokens/s per GPU on {name}" in sheet.columns
        assert f"Per million output tokens on {name} (USD)" in sheet.columns


def test_a_one_node_model_reads_the_same_on_both_fabrics_in_the_memo():
    result = rank_offers(offers("infiniband"), serve("llama3-70b-chat", (8,)))
    picked = shortlist.from_result(result, top=1)
    row = picked.sensitivity.iloc[0]
    for name in ("tokens_per_s_per_gpu", "usd_per_million_output_tokens", "tpot_ms"):
        assert row[f"{name}_infiniband"] == row[f"{name}_ethernet"], name
