"""The step parts are declared once (fabricscope/model/scaling.py STEP_PARTS) and every place that
shows or stores them reads that declaration: a new term cannot be left out of one of them."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pandas as pd
import pytest

from fabricscope.app.charts import step_time_bars
from fabricscope.app.rank_data import STEP_PARTS as APP_STEP_PARTS
from fabricscope.model.scaling import (
    FAILURE_PART,
    STEP_PARTS,
    Estimate,
    LayoutGrid,
    estimate,
)
from fabricscope.model.workloads import preset
from fabricscope.procurement.shortlist import COLUMNS
from fabricscope.rank.catalog import profiles
from fabricscope.rank.ranking import RANKED_COLUMNS
from fabricscope.warehouse.db import read_frame

DECLARED = [part.field for part in (*STEP_PARTS, FAILURE_PART)]


def _rows(count: int, fabric: str, gpu: str = "H100-SXM-80GB") -> list[dict[str, object]]:
    return [
        {
            "gpu_model": gpu,
            "gpu_count": count,
            "gpus_per_node": 8,
            "fabric_class": fabric,
            "fabric_gbps_per_gpu": gbps,
        }
        for gbps in (12.5, 50.0, 400.0)
    ]


@pytest.mark.parametrize(
    ("name", "count", "cp"),
    [
        ("gpt3-175b", 1024, 1),
        ("llama3-70b", 512, 4),  # 32k tokens, context parallelism over 4 GPUs
        ("mixtral-8x7b", 256, 1),
        ("deepseek-v3", 2048, 1),
        ("llama3-8b", 8, 1),
    ],
)
def test_the_parts_sum_to_the_step_time(name, count, cp):
    job = preset(name)
    layout = None
    if cp > 1:
        job = job.model_copy(update={"seq_len": 32768})
        layout = LayoutGrid.partial(job, tp=8, pp=4, cp=cp)
    rows = _rows(count, "infiniband") + _rows(count, "ethernet")
    result = estimate(job, profiles(rows), layout)
    found = np.isfinite(result.step_time_s)
    assert found.any()
    total = sum(getattr(result, part.field) for part in STEP_PARTS)
    np.testing.assert_allclose(total[found], result.step_time_s[found], rtol=1e-9)
    if cp > 1:  # over slow Ethernet the exchange is no longer hidden by attention
        assert (result.cp[found] == cp).all() and (result.cp_comm_s[found] > 0).any()


def test_every_time_the_estimate_reports_per_step_is_a_declared_part():
    per_step = {f.name for f in fields(Estimate) if f.name.endswith("_s")} - {
        "step_time_s",
        "tokens_per_s",
    }
    assert per_step == set(DECLARED)
    assert len({part.label for part in STEP_PARTS}) == len(STEP_PARTS)


def test_the_ranking_the_app_and_the_exports_read_the_declaration():
    assert set(DECLARED) <= set(RANKED_COLUMNS)
    assert list(APP_STEP_PARTS) == DECLARED
    assert all(COLUMNS[field].header for field in DECLARED)
    assert [COLUMNS[p.field].header for p in STEP_PARTS] == [p.heading for p in STEP_PARTS]
    parts = pd.DataFrame({"offer": ["a"], "part": ["compute"], "seconds": [1.0], "order": [0]})
    chart = step_time_bars(parts).to_dict()
    assert chart["encoding"]["color"]["scale"]["domain"] == list(APP_STEP_PARTS.values())


def test_the_stored_estimates_hold_every_part(fixture_warehouse):
    _, columns = read_frame(fixture_warehouse, "describe estimates")
    assert set(DECLARED) <= set(columns["column_name"])
