"""The Providers page: the questionnaire matrix, evidence, fabric facts and freshness."""

from __future__ import annotations

import shutil

from fabricscope.app.providers_view import answer_matrix, evidence_frame
from fabricscope.evidence.transparency import answers, load_questionnaire
from fabricscope.ops.status import coverage
from fabricscope.procurement.rfi import stored_answers
from fabricscope.warehouse.db import current_snapshot
from tests.ui.apptest import open_page, text_of


def test_the_matrix_and_a_providers_evidence(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page("pages/providers.py")
    assert not app.exception and not app.error
    questionnaire = load_questionnaire()
    matrix = app.dataframe[0].value
    assert [q.id for q in questionnaire.questions] == list(matrix.columns[4:])
    assert set(matrix["provider"]) == {a.provider for a in answers(fixture_warehouse)}
    app.selectbox(key="providers_provider").select("voltage_park").run()
    assert not app.exception
    evidence = next(f.value for f in app.dataframe if "quote" in f.value.columns)
    assert evidence["source_url"].dropna().str.startswith("https://").all()
    facts = next(f.value for f in app.dataframe if "fabric_class" in f.value.columns)
    assert len(facts) >= 1 and "evidence" in facts.columns
    freshness = next(f.value for f in app.dataframe if "stale" in f.value.columns)
    assert freshness["stale"].dtype == bool
    # the cluster-capable offers without a fabric class, each with why: as `status` lists them
    gaps = next(f.value for f in app.dataframe if "why" in f.value.columns)
    assert gaps.equals(coverage(fixture_warehouse).gaps)
    assert gaps["why"].notna().all()


def test_unknown_answers_carry_no_evidence(fixture_warehouse):
    given = answers(fixture_warehouse)
    matrix = answer_matrix(given, load_questionnaire())
    assert matrix["score"].is_monotonic_decreasing
    for provider in matrix["provider"]:
        frame = evidence_frame(given, provider)
        unknown = frame[frame["answer"].str.contains("unknown")]
        assert unknown["quote"].isna().all()
        known = frame[~frame["answer"].str.contains("unknown")]
        assert known["quote"].notna().all()


def test_providers_replies_are_uploaded_checked_and_stored(
    use_warehouse, fixture_warehouse, tmp_path
):
    path = use_warehouse(tmp_path / "warehouse.duckdb")
    shutil.copy(fixture_warehouse, path)
    app = open_page("pages/providers.py")
    assert not app.exception and not app.error
    replies = (
        "provider,question_id,value,answer,answered_on,answered_by,entered_by\n"
        "voltage_park,rdma,yes,GPUDirect RDMA on every node,2026-12-01,J. Doe,pat\n"
        "voltage_park,rdma,maybe,?,2026-12-01,J. Doe,pat\n"
    )
    app.file_uploader(key="providers_replies").upload("replies.csv", replies.encode(), "text/csv")
    app.run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert errors == [
        "Refused: replies.csv line 3, field value: Input should be 'yes', 'partial' or 'no' "
        "(got 'maybe')"
    ]
    before = current_snapshot(path)
    app.button(key="providers_store").click().run()
    assert not app.exception
    assert "Stored 1 answers (0 already stored)" in text_of(app)
    assert current_snapshot(path).snapshot_id == before.snapshot_id + 1
    assert list(stored_answers(path)["question_id"]) == ["rdma"]
    matrix = app.dataframe[0].value.set_index("provider")
    assert matrix.loc["voltage_park", "rdma"].endswith("(reply)")
    assert matrix.loc["voltage_park", "replied"] == "1, last on 2026-12-01"


def test_a_file_that_is_no_answers_file_stores_nothing(use_warehouse, fixture_warehouse, tmp_path):
    path = use_warehouse(tmp_path / "warehouse.duckdb")
    shutil.copy(fixture_warehouse, path)
    before = current_snapshot(path)
    app = open_page("pages/providers.py")
    app.file_uploader(key="providers_replies").upload("x.csv", b"provider,colour\nx,red\n")
    app.run()
    assert next(e.value for e in app.error).startswith(
        "This file cannot be used: x.csv line 1: unknown column 'colour'"
    )
    assert not [b for b in app.button if b.key == "providers_store"]
    assert current_snapshot(path) == before
