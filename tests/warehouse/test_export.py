from __future__ import annotations

import json

import duckdb
import pytest

from fabricscope.warehouse.db import PUBLISHED_RELATIONS, WarehouseError, read_frame
from fabricscope.warehouse.export import export_parquet
from tests.helpers import publish_synthetic


def test_whole_snapshot_exports_to_parquet_that_matches_the_warehouse(warehouse_path, tmp_path):
    publish_synthetic(warehouse_path, 500, source="alpha")
    out = tmp_path / "export"
    result = export_parquet(warehouse_path, out)
    assert set(result.files) == set(PUBLISHED_RELATIONS)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["snapshot_id"] == result.snapshot.snapshot_id
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no partial files left
    con = duckdb.connect()
    for relation in ("offers_current", "instance_catalog", "gpus"):
        exported = con.execute(
            f"select * from read_parquet('{out / (relation + '.parquet')}') order by all"
        ).df()
        direct = read_frame(warehouse_path, f"select * from {relation} order by all")[1]
        assert len(exported) == manifest["rows"][relation] == len(direct)
        assert exported.astype(str).equals(direct.astype(str))


def test_one_view_exports_alone_and_unknown_views_are_refused(warehouse_path, tmp_path):
    result = export_parquet(warehouse_path, tmp_path / "one", ["gpus"])
    assert list(result.files) == ["gpus"]
    with pytest.raises(WarehouseError, match="cannot export secrets"):
        export_parquet(warehouse_path, tmp_path / "two", ["secrets"])
