"""A warehouse built before a migration keeps its data and its verifiable hashes after it."""

from __future__ import annotations

import csv

import duckdb
import pandas as pd
import pytest

from fabricscope.warehouse.db import read_frame, run_content_hash, verify
from fabricscope.warehouse.gpus import REFERENCE_DIR
from fabricscope.warehouse.load import init_warehouse
from tests.helpers import publish_synthetic

# what 0004_zones_and_grades adds, undone to stand for a warehouse built before it
UNDO_0004 = """
drop table instance_gpus;
drop table fabric_product_lines;
alter table offers_history drop column zones;
alter table fabric_history drop column source_grade;
alter table providers drop column kind;
delete from schema_migrations where version = '0004_zones_and_grades';
"""


def test_migration_0004_keeps_old_runs_verifiable(warehouse_path):
    publish_synthetic(warehouse_path, 50, source="old_source")
    with duckdb.connect(str(warehouse_path)) as con:
        con.execute(UNDO_0004)
        # the hashes as they were recorded then, over the rows without the new columns
        runs = con.execute("select run_id from scrape_runs where status = 'ok'").fetchall()
        for (run_id,) in runs:
            con.execute(
                "update scrape_runs set content_hash = ? where run_id = ?",
                [run_content_hash(con, run_id), run_id],
            )
        con.execute("checkpoint")

    result = init_warehouse(warehouse_path)  # applies 0004 again, then the views
    assert any("0004_zones_and_grades" in note for note in result.notes)
    report = verify(warehouse_path)
    assert report.ok, report.mismatched_runs
    offers = read_frame(warehouse_path, "select zones from offers_current")[1]
    assert len(offers) == 50 and offers["zones"].isna().all()  # not known then: NULL
    kinds = read_frame(warehouse_path, "select provider, kind from providers")[1]
    assert dict(zip(kinds["provider"], kinds["kind"], strict=True))["vast_ai"] == "marketplace"


@pytest.mark.parametrize("table", ["instance_gpus", "fabric_product_lines", "gemm_ceilings"])
def test_the_new_reference_tables_load_from_their_csvs(warehouse_path, table):
    with (REFERENCE_DIR / f"{table}.csv").open(newline="", encoding="utf-8") as handle:
        expected = len(list(csv.DictReader(handle)))
    assert len(read_frame(warehouse_path, f"select * from {table}")[1]) == expected


def test_migration_0012_adds_the_fp4_peak_beside_the_others_and_loads_it(warehouse_path):
    publish_synthetic(warehouse_path, 20, source="old_source")
    with duckdb.connect(str(warehouse_path)) as con:
        # a warehouse built before 0012: its gpus table without the column
        con.execute("alter table gpus drop column fp4_dense_tflops")
        con.execute("delete from schema_migrations where version = '0012_fp4_peak'")
        con.execute("checkpoint")

    result = init_warehouse(warehouse_path)
    assert any("0012_fp4_peak" in note for note in result.notes)
    assert verify(warehouse_path).ok
    columns = list(read_frame(warehouse_path, "select * from gpus limit 0")[1].columns)
    peaks = columns[columns.index("bf16_dense_tflops") :][:3]
    assert peaks == ["bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops"]
    fp4 = read_frame(warehouse_path, "select gpu_model, fp4_dense_tflops from gpus")[1]
    stated = dict(zip(fp4["gpu_model"], fp4["fp4_dense_tflops"], strict=True))
    assert stated["B200-SXM-180GB"] == 9000 and stated["GB300-NVL-288GB"] == 15000
    assert pd.isna(stated["H100-SXM-80GB"])  # no FP4 tensor cores: NULL, never zero
    offers = read_frame(warehouse_path, "select fp4_dense_tflops from instance_catalog")[1]
    assert len(offers) == 20
