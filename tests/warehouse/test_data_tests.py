"""The SQL data tests: none fails on a good warehouse, and each can fail."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from fabricscope.warehouse.db import apply_views, data_test_files, run_data_tests
from fabricscope.warehouse.models import FabricClass, ObtainedBy, PriceBasis, PricingTier
from tests.helpers import publish_synthetic


@pytest.fixture
def good(warehouse_path):
    publish_synthetic(warehouse_path, 300, source="alpha", seed=1)
    publish_synthetic(warehouse_path, 300, source="beta", seed=2)
    return warehouse_path


def test_no_data_test_fails_on_a_published_warehouse(good):
    con = duckdb.connect(str(good), read_only=True)
    try:
        assert run_data_tests(con) == {}
    finally:
        con.close()


def scratch(good, tmp_path):
    """A writable copy to break on purpose; the published file is never written."""
    copy = tmp_path / "scratch.duckdb"
    shutil.copyfile(good, copy)
    con = duckdb.connect(str(copy))
    apply_views(con)
    return con


RUN = "(select run_id from scrape_runs where status = 'ok' limit 1)"
BREAKAGE = {
    "assert_offer_prices_positive_finite": "update offers_history set price = 'nan'::double where instance_type = 'syn-1'",
    "assert_offer_enums": "update offers_history set pricing_tier = 'weekly' where instance_type = 'syn-1'",
    "assert_offer_keys_unique_per_run": "insert into offers_history select * from offers_history where instance_type = 'syn-1'",
    "assert_gpu_models_known": "update offers_history set gpu_model = 'H100' where instance_type = 'syn-1'",
    "assert_fabric_facts_valid": f"insert into fabric_history (run_id, provider, source, instance_type, fabric_class,"
    f" source_url, evidence, obtained_by, observed_at) values ({RUN}, 'p', 'alpha', 'x',"
    f" 'carrier_pigeon', 'https://example.invalid', 'quote', 'curated', now())",
    "assert_history_from_good_runs": "update scrape_runs set status = 'failed' where source = 'alpha'",
    "assert_reference_sourced": "update gpus set source = '' where gpu_model = 'H100-SXM-80GB'",
    "assert_gpu_aliases_unambiguous": "update gpus set aliases = 'H100 SXM' where gpu_model = 'A100-SXM-80GB'",
    "assert_runs_consistent": "update scrape_runs set content_hash = null where source = 'beta'",
}


def test_every_data_test_has_a_breakage_case():
    assert {f.stem for f in data_test_files()} == set(BREAKAGE)


@pytest.mark.parametrize("test_name", sorted(BREAKAGE))
def test_each_data_test_catches_its_breakage(good, tmp_path, test_name):
    con = scratch(good, tmp_path)
    try:
        assert run_data_tests(con) == {}
        con.execute(BREAKAGE[test_name])
        failures = run_data_tests(con)
        assert test_name in failures and failures[test_name] >= 1
    finally:
        con.close()


def _sql_list(test_name: str, marker: str) -> set[str]:
    text = next(f for f in data_test_files() if f.stem == test_name).read_text()
    start = text.index(marker)
    inside = text[text.index("(", start) + 1 : text.index(")", start)]
    return {part.strip().strip("'") for part in inside.split(",")}


def test_sql_enum_lists_match_the_python_contracts():
    assert _sql_list("assert_offer_enums", "pricing_tier not in") == {t.value for t in PricingTier}
    assert _sql_list("assert_offer_enums", "price_basis not in") == {b.value for b in PriceBasis}
    assert _sql_list("assert_offer_enums", "obtained_by not in") == {o.value for o in ObtainedBy}
    assert _sql_list("assert_fabric_facts_valid", "fabric_class not in") == {
        c.value for c in FabricClass
    }
