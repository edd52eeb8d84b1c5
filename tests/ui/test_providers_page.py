"""The Providers page: the questionnaire matrix, evidence, fabric facts and freshness."""

from __future__ import annotations

from fabricscope.app.providers_view import answer_matrix, evidence_frame
from fabricscope.evidence.transparency import answers, load_questionnaire
from fabricscope.ops.status import coverage
from tests.ui.apptest import open_page


def test_the_matrix_and_a_providers_evidence(use_warehouse, fixture_warehouse):
    use_warehouse(fixture_warehouse)
    app = open_page("pages/providers.py")
    assert not app.exception and not app.error
    questionnaire = load_questionnaire()
    matrix = app.dataframe[0].value
    assert [q.id for q in questionnaire.questions] == list(matrix.columns[3:])
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
