from __future__ import annotations

import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from fabricscope.warehouse import db
from fabricscope.warehouse.db import (
    SnapshotWriter,
    WarehouseBusyError,
    WarehouseError,
    current_snapshot,
    read_frame,
    verify,
    wal_of,
)
from fabricscope.warehouse.load import RunBatch, init_warehouse, publish_run
from fabricscope.warehouse.models import RunStatus
from fabricscope.warehouse.query import run_user_query
from fabricscope.warehouse.synthetic import synthetic_offers
from tests.helpers import ROOT, publish_synthetic, python_env, run_record


def count(path: Path, sql: str) -> int:
    return int(read_frame(path, sql)[1].iloc[0, 0])


def test_init_creates_a_snapshot_with_reference_data_and_is_idempotent(tmp_path):
    path = tmp_path / "wh" / "warehouse.duckdb"
    first = init_warehouse(path)
    assert first.snapshot is not None and first.snapshot.snapshot_id == 1
    assert any("applied migrations" in n for n in first.notes)
    assert count(path, "select count(*) from gpus") >= 20
    assert count(path, "select count(*) from fabric_classes") == 8
    again = init_warehouse(path)
    assert again.snapshot == current_snapshot(path)
    assert "already up to date" in again.notes
    assert current_snapshot(path).snapshot_id == 1
    assert count(path, "select count(*) from schema_migrations") >= 1
    assert verify(path).ok


def test_changed_reference_csv_publishes_a_new_snapshot(tmp_path, warehouse_path):
    reference = tmp_path / "reference"
    shutil.copytree(db.SQL_DIR.parent / "reference", reference)
    rates = reference / "fx_rates.csv"
    rates.write_text(rates.read_text() + "JPY,,,prior: rate not yet sourced\n")
    result = init_warehouse(warehouse_path, reference)
    assert result.snapshot.snapshot_id == 2
    assert count(warehouse_path, "select count(*) from fx_rates where currency = 'JPY'") == 1


def test_reference_csv_with_wrong_columns_is_refused_and_changes_nothing(tmp_path, warehouse_path):
    reference = tmp_path / "reference"
    shutil.copytree(db.SQL_DIR.parent / "reference", reference)
    (reference / "providers.csv").write_text("provider,name\nx,y\n")
    before = current_snapshot(warehouse_path)
    with pytest.raises(WarehouseError, match=r"providers.csv: columns .* do not match"):
        init_warehouse(warehouse_path, reference)
    assert current_snapshot(warehouse_path) == before


def test_a_reference_row_with_a_stray_quote_is_refused_with_its_line(tmp_path, warehouse_path):
    # a sniffing reader took such a file with its columns shifted; the stated dialect refuses it
    reference = tmp_path / "reference"
    shutil.copytree(db.SQL_DIR.parent / "reference", reference)
    path = reference / "instance_gpus.csv"
    good = path.read_text()
    path.write_text(good + 'aws,p9.test,H100-SXM-80GB,8,"says "id": "x" unescaped"\n')
    before = current_snapshot(warehouse_path)
    with pytest.raises(WarehouseError, match=r"instance_gpus.csv does not load: .*Line"):
        init_warehouse(warehouse_path, reference)
    assert current_snapshot(warehouse_path) == before


def test_an_ok_run_becomes_current_and_the_next_one_replaces_it(warehouse_path):
    status, result = publish_synthetic(warehouse_path, 50, source="alpha", seed=1)
    assert status is RunStatus.OK and result.snapshot.snapshot_id == 2
    assert count(warehouse_path, "select count(*) from offers_current") == 50
    publish_synthetic(warehouse_path, 30, source="alpha", seed=2)
    assert count(warehouse_path, "select count(*) from offers_current") == 30
    assert count(warehouse_path, "select count(*) from offers_history") == 80  # append-only
    publish_synthetic(warehouse_path, 10, source="beta", seed=3)
    assert count(warehouse_path, "select count(*) from offers_current") == 40
    runs = read_frame(warehouse_path, "select * from scrape_runs order by snapshot_id")[1]
    assert list(runs["items_published"]) == [50, 30, 10]
    assert runs["content_hash"].notna().all()
    assert verify(warehouse_path).ok


def test_a_failed_run_keeps_the_sources_last_good_rows_and_is_reported(warehouse_path):
    publish_synthetic(warehouse_path, 20, source="alpha", seed=1)
    good = read_frame(warehouse_path, "select * from offers_current order by instance_type")[1]
    status, _ = publish_synthetic(warehouse_path, 0, source="alpha", status=RunStatus.FAILED)
    assert status is RunStatus.FAILED
    after = read_frame(warehouse_path, "select * from offers_current order by instance_type")[1]
    assert after.equals(good)
    fresh = read_frame(warehouse_path, "select * from source_freshness")[1].iloc[0]
    assert fresh["last_status"] == "failed"
    assert fresh["last_error"] == "synthetic failure"
    assert fresh["failures_since_last_good"] == 1
    assert fresh["ok_runs"] == 1


def test_rows_that_fail_the_data_tests_are_quarantined_not_published(warehouse_path):
    publish_synthetic(warehouse_path, 20, source="alpha", seed=1)
    before = read_frame(warehouse_path, "select * from offers_current order by instance_type")[1]
    offers = synthetic_offers(5, source="alpha", seed=9).to_pandas()
    offers.loc[0, "gpu_model"] = "H100"  # not a canonical id: must never be published
    offers.loc[1, "price"] = 0.0
    run = run_record("alpha", scraped=5)
    status, result = publish_run(warehouse_path, RunBatch(run, offers))
    assert status is RunStatus.QUARANTINED
    assert "assert_gpu_models_known" in result.notes[-1]
    assert "assert_offer_prices_positive_finite" in result.notes[-1]
    after = read_frame(warehouse_path, "select * from offers_current order by instance_type")[1]
    assert after.equals(before)
    kept = read_frame(
        warehouse_path,
        "select * from quarantined_items where run_id = ?".replace("?", f"'{run.run_id}'"),
    )[1]
    assert len(kept) == 5 and kept["reason"].str.contains("data tests failed").all()
    recorded = read_frame(warehouse_path, f"select * from scrape_runs where run_id='{run.run_id}'")
    assert recorded[1].iloc[0]["status"] == "quarantined"
    assert verify(warehouse_path).ok


def test_a_running_run_cannot_be_published(warehouse_path):
    with pytest.raises(WarehouseError, match="still running"):
        publish_run(warehouse_path, RunBatch(run_record("alpha", RunStatus.RUNNING)))


def test_source_freshness_reports_age(warehouse_path):
    publish_synthetic(warehouse_path, 5, source="old", age=timedelta(hours=72))
    publish_synthetic(warehouse_path, 5, source="new")
    fresh = read_frame(warehouse_path, "select source, age_hours from source_freshness")[1]
    ages = dict(zip(fresh["source"], fresh["age_hours"], strict=True))
    assert 71.9 < ages["old"] < 72.2 and ages["new"] < 0.1


def test_verify_detects_rows_changed_behind_the_protocols_back(warehouse_path):
    publish_synthetic(warehouse_path, 10, source="alpha")
    con = duckdb.connect(str(warehouse_path))  # a rogue writer, not the protocol
    con.execute("update offers_history set price = price * 2 where instance_type = 'syn-0'")
    con.close()
    report = verify(warehouse_path)
    assert not report.ok and len(report.mismatched_runs) == 1


def test_orphaned_staging_files_are_removed_at_start(warehouse_path):
    orphan = warehouse_path.with_name(warehouse_path.name + ".staging-123-456")
    orphan.write_bytes(b"half a snapshot")
    wal_of(orphan).write_bytes(b"half a wal")
    _, result = publish_synthetic(warehouse_path, 3)
    assert not orphan.exists() and not wal_of(orphan).exists()
    assert any("orphaned staging" in n for n in result.notes)


def _leave_a_wal(path: Path) -> None:
    con = duckdb.connect(str(path))
    con.execute("pragma disable_checkpoint_on_shutdown")
    con.execute("set wal_autocheckpoint = '1TB'")
    con.execute("insert into fx_rates values ('XTS', 1.0, null, 'test currency')")
    con.close()


def test_a_wal_beside_the_published_file_is_replayed_and_kept_aside(warehouse_path):
    _leave_a_wal(warehouse_path)
    assert wal_of(warehouse_path).exists()
    # until a publish folds it in, reads refuse rather than mix unpublished changes in
    with pytest.raises(WarehouseError, match="written to outside fabricscope"):
        read_frame(warehouse_path, "select count(*) from fx_rates")
    with pytest.raises(WarehouseError, match="written to outside fabricscope"):
        run_user_query(warehouse_path, "select count(*) from fx_rates")
    _, result = publish_synthetic(warehouse_path, 3)
    assert not wal_of(warehouse_path).exists()
    aside = list(warehouse_path.parent.glob("*.wal.aside-*"))
    assert len(aside) == 1
    assert any("replayed a WAL" in n for n in result.notes)
    assert count(warehouse_path, "select count(*) from fx_rates where currency = 'XTS'") == 1


def test_a_wal_that_will_not_replay_is_renamed_aside_never_deleted(warehouse_path):
    publish_synthetic(warehouse_path, 3)
    before = read_frame(warehouse_path, "select count(*) from offers_history")[1]
    _leave_a_wal(warehouse_path)
    wal = bytearray(wal_of(warehouse_path).read_bytes())
    for position in range(100, len(wal) - 100, 7):  # flip bits: checksums no longer match
        wal[position] ^= 0xFF
    wal_of(warehouse_path).write_bytes(bytes(wal))
    status, result = publish_synthetic(warehouse_path, 4, seed=5)
    assert status is RunStatus.OK
    aside = list(warehouse_path.parent.glob("*.wal.aside-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == bytes(wal)
    assert any("would not replay" in n for n in result.notes)
    assert count(warehouse_path, "select count(*) from fx_rates where currency = 'XTS'") == 0
    assert int(before.iloc[0, 0]) + 4 == count(
        warehouse_path, "select count(*) from offers_history"
    )
    assert verify(warehouse_path).ok


def test_an_edited_migration_is_refused(tmp_path, monkeypatch, warehouse_path):
    migrations = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS_DIR, migrations)
    first = sorted(migrations.glob("*.sql"))[0]
    first.write_text(first.read_text() + "\n-- edited after release\n")
    monkeypatch.setattr(db, "MIGRATIONS_DIR", migrations)
    with pytest.raises(WarehouseError, match="changed after it was applied"):
        init_warehouse(warehouse_path)


def test_a_new_migration_is_applied_once_and_recorded(tmp_path, monkeypatch, warehouse_path):
    migrations = tmp_path / "migrations"
    shutil.copytree(db.MIGRATIONS_DIR, migrations)
    (migrations / "9999_extra.sql").write_text("create table extra_table (a integer);\n")
    monkeypatch.setattr(db, "MIGRATIONS_DIR", migrations)
    result = init_warehouse(warehouse_path)
    assert any("9999_extra" in n for n in result.notes)
    assert result.snapshot.snapshot_id == 2
    assert init_warehouse(warehouse_path).snapshot.snapshot_id == 2
    assert (
        count(warehouse_path, "select count(*) from schema_migrations where version = '9999_extra'")
        == 1
    )


HOLD_THE_LOCK = """
import sys, time
from pathlib import Path
from fabricscope.warehouse.db import SnapshotWriter
with SnapshotWriter(Path(sys.argv[1])):
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_second_writer_gets_a_clear_error_and_changes_nothing(warehouse_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(warehouse_path)],
        stdout=subprocess.PIPE,
        text=True,
        env=python_env(),
        cwd=ROOT,
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        before = warehouse_path.read_bytes()
        with pytest.raises(WarehouseBusyError, match=r"another refresh is running.*pid \d+"):
            publish_synthetic(warehouse_path, 5)
        with pytest.raises(WarehouseBusyError), SnapshotWriter(warehouse_path):
            pass
        assert warehouse_path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    # the lock dies with its holder: the next writer proceeds
    started = time.monotonic()
    status, _ = publish_synthetic(warehouse_path, 5)
    assert status is RunStatus.OK and time.monotonic() - started < 30


def test_a_run_with_duplicate_offer_keys_is_quarantined(warehouse_path):
    offers = synthetic_offers(4, source="alpha", seed=3).to_pandas()
    offers = pd.concat([offers, offers.iloc[[0]]], ignore_index=True)
    status, result = publish_run(warehouse_path, RunBatch(run_record("alpha"), offers))
    assert status is RunStatus.QUARANTINED
    assert "assert_offer_keys_unique_per_run (1 rows)" in result.notes[-1]
    assert count(warehouse_path, "select count(*) from offers_current") == 0
