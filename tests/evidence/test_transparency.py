"""The transparency questionnaire, answered from real warehouses: one built from the recorded
fixtures by an offline refresh, one published from hand-made facts with known answers."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import duckdb
import pytest

from fabricscope.evidence.transparency import (
    QUESTIONNAIRE_FILE,
    RULES,
    Answer,
    AnswerValue,
    Evidence,
    TransparencyError,
    answers,
    load_questionnaire,
    open_questions,
    scores,
)
from fabricscope.ops.refresh import refresh
from fabricscope.warehouse.db import current_snapshot, read_frame
from fabricscope.warehouse.load import (
    RunBatch,
    fabric_table,
    init_warehouse,
    offers_table,
    publish_run,
)
from fabricscope.warehouse.models import FabricFact, utc_now
from tests.helpers import make_offer, run_record

QUESTION_IDS = [
    "fabric_type",
    "bandwidth",
    "rdma",
    "topology",
    "cluster_size",
    "multi_node_benchmarks",
    "public_prices",
    "pricing_terms",
]
FABRIC_QUESTIONS = QUESTION_IDS[:6]
NOW = utc_now()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fixture_warehouse(tmp_path_factory):
    """The warehouse `fabricscope refresh --offline` builds from fixtures/ (no network)."""
    root = tmp_path_factory.mktemp("fixture_warehouse")
    path = root / "warehouse.duckdb"
    outcomes = refresh(path, root, [], offline=True)
    assert any(o.ok and o.facts for o in outcomes) and any(o.ok and o.offers for o in outcomes)
    return path


@pytest.fixture(scope="module")
def fixture_answers(fixture_warehouse):
    return answers(fixture_warehouse)


def offer(provider, tier="on_demand", obtained_by="scraped", instance_type="8x H100"):
    return make_offer(
        provider=provider,
        source=f"{provider}_{'catalog' if obtained_by == 'catalog' else 'page'}",
        instance_type=instance_type,
        gpu_model=None,
        pricing_tier=tier,
        source_url=f"https://{provider}.example.invalid/pricing",
        obtained_by=obtained_by,
        observed_at=NOW,
    )


def fact(provider, instance_type, fabric_class, **fields):
    return FabricFact(
        provider=provider,
        source="curated_fabric",
        instance_type=instance_type,
        fabric_class=fabric_class,
        source_url=f"https://{provider}.example.invalid/docs",
        evidence=f"{provider} {instance_type}: quoted sentence",
        obtained_by="curated",
        observed_at=NOW,
        **{"source_grade": "provider", **fields},
    )


FULL_IB = {
    "fabric_product": "NVIDIA Quantum-2 NDR",
    "fabric_gbps_per_gpu": 400.0,
    "fabric_gbps_per_node": 3200.0,
    "rdma": True,
    "gpudirect_rdma": True,
    "multi_node": True,
    "max_cluster_gpus": 4096,
    "topology": "rail-optimised non-blocking fat tree",
    "published_benchmark_url": "https://ib-cloud.example.invalid/nccl-tests",
}
OFFERS = [
    offer("ib_cloud"),
    offer("ib_cloud", "spot"),
    offer("ib_cloud", "reserved_1y"),
    offer("dark_cloud"),
    offer("vague_cloud", obtained_by="catalog"),
    offer("tcp_cloud"),
    offer("half_cloud", "spot"),
]
FACTS = [
    fact("ib_cloud", "HGX H100 cluster", "infiniband", **FULL_IB),
    # a fact that states nothing beyond "we looked": every answer stays unknown
    fact("vague_cloud", "GPU instances", "unknown"),
    fact("tcp_cloud", "8x H100 VM", "ethernet", rdma=False, gpudirect_rdma=False),
    fact("half_cloud", "H200 pods", "roce", rdma=True),
    fact("half_cloud", "B200 on-demand", "unknown"),
    fact("solo_cloud", "1x L40S", "none", multi_node=False),
    fact("facts_only", "ND H100 v5", "infiniband", rdma=True, gpudirect_rdma=True),
    # a blog's word alone: partial, never yes; the provider's own page beside it makes it yes
    fact("blog_cloud", "8x H100", "infiniband", source_grade="third_party", **FULL_IB),
    fact("both_cloud", "8x H100 (blog)", "infiniband", source_grade="third_party", **FULL_IB),
    fact("both_cloud", "8x H100", "infiniband", source_grade="provider", fabric_gbps_per_gpu=400),
]


@pytest.fixture(scope="module")
def made_warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("made_warehouse") / "warehouse.duckdb"
    init_warehouse(path)
    publish_run(path, RunBatch(run_record("offers_page"), offers_table(OFFERS)))
    publish_run(path, RunBatch(run_record("curated_fabric"), None, fabric_table(FACTS)))
    return path


@pytest.fixture(scope="module")
def made(made_warehouse):
    given = answers(made_warehouse)
    return {(a.provider, a.question_id): a for a in given}, given


def values(by_key, provider):
    return {q: by_key[(provider, q)].value.value for q in QUESTION_IDS}


# ---------------------------------------------------------------------- questionnaire


def test_the_questionnaire_file_validates():
    questionnaire = load_questionnaire()
    assert questionnaire.version
    assert [q.id for q in questionnaire.questions] == QUESTION_IDS
    assert set(RULES) >= set(QUESTION_IDS)
    for question in questionnaire.questions:
        assert question.weight > 0
        assert question.text.endswith("?")
        assert question.why.endswith(".") and question.source


def broken(tmp_path, change):
    data = json.loads(QUESTIONNAIRE_FILE.read_text())
    change(data)
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(data))
    return path


def duplicate_id(data):
    data["questions"][1]["id"] = data["questions"][0]["id"]


def negative_weight(data):
    data["questions"][2]["weight"] = -1


def zero_weight(data):
    data["questions"][2]["weight"] = 0


def no_version(data):
    del data["version"]


def question_without_rule(data):
    data["questions"][0]["id"] = "uptime_sla"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (duplicate_id, r"duplicate question id 'fabric_type'"),
        (negative_weight, r"questions\.2\.weight: Input should be greater than 0"),
        (zero_weight, r"questions\.2\.weight: Input should be greater than 0"),
        (no_version, r"version: Field required"),
        (question_without_rule, r"no answering rule for question\(s\) uptime_sla"),
    ],
)
def test_a_broken_questionnaire_raises_a_clear_error(tmp_path, change, message):
    path = broken(tmp_path, change)
    with pytest.raises(TransparencyError, match=message) as error:
        load_questionnaire(path)
    assert str(path) in str(error.value)


def test_a_questionnaire_that_is_not_json_says_where(tmp_path):
    path = tmp_path / "questions.json"
    path.write_text('{"version": "1",')
    with pytest.raises(TransparencyError, match=r"not valid JSON \(line 1"):
        load_questionnaire(path)


# ------------------------------------------------------------ the fixture warehouse


def test_every_provider_with_offers_or_facts_answers_every_question(
    fixture_warehouse, fixture_answers
):
    _, frame = read_frame(
        fixture_warehouse,
        "select provider from offers_current union select provider from fabric_current",
    )
    assert {a.provider for a in fixture_answers} == set(frame["provider"])
    per_provider = {}
    for answer in fixture_answers:
        per_provider.setdefault(answer.provider, []).append(answer.question_id)
    assert all(ids == QUESTION_IDS for ids in per_provider.values())


def test_answers_carry_the_snapshot_and_the_questionnaire_version(
    fixture_warehouse, fixture_answers
):
    snapshot = current_snapshot(fixture_warehouse)
    assert snapshot is not None
    assert {a.snapshot_id for a in fixture_answers} == {snapshot.snapshot_id}
    assert {a.questionnaire_version for a in fixture_answers} == {load_questionnaire().version}
    assert {s.snapshot_id for s in scores(fixture_answers).values()} == {snapshot.snapshot_id}


def test_every_known_answer_has_evidence_with_a_url_and_a_date(fixture_answers):
    for answer in fixture_answers:
        if answer.value is AnswerValue.UNKNOWN:
            assert answer.evidence == ()
            continue
        assert answer.evidence, answer
        for evidence in answer.evidence:
            assert evidence.source_url.startswith(("http://", "https://")), evidence
            assert evidence.observed_at.tzinfo is not None
            assert evidence.quote and evidence.stated


def test_evidence_is_taken_from_the_warehouse_never_invented(fixture_warehouse, fixture_answers):
    _, facts = read_frame(
        fixture_warehouse,
        "select provider, instance_type, source_url, evidence, observed_at from fabric_current",
    )
    _, offers = read_frame(
        fixture_warehouse, "select distinct provider, source, source_url from offers_current"
    )
    fact_rows = {
        (r.provider, r.instance_type, r.source_url, r.evidence, r.observed_at.to_pydatetime())
        for r in facts.itertuples()
    }
    price_rows = {(r.provider, r.source, r.source_url) for r in offers.itertuples()}
    for answer in fixture_answers:
        for e in answer.evidence:
            if answer.question_id in FABRIC_QUESTIONS:
                key = (answer.provider, e.instance_type, e.source_url, e.quote, e.observed_at)
                assert key in fact_rows, answer
            else:
                assert (answer.provider, e.source, e.source_url) in price_rows, answer


def test_a_provider_without_fabric_facts_scores_below_one_with_a_curated_infiniband_fact(
    fixture_warehouse, fixture_answers
):
    _, frame = read_frame(
        fixture_warehouse,
        "select distinct provider from fabric_current "
        "where fabric_class = 'infiniband' and obtained_by = 'curated'",
    )
    with_ib = set(frame["provider"])
    _, facts = read_frame(fixture_warehouse, "select distinct provider from fabric_current")
    _, priced = read_frame(fixture_warehouse, "select distinct provider from offers_current")
    without = set(priced["provider"]) - set(facts["provider"])
    by_key = {(a.provider, a.question_id): a for a in fixture_answers}
    assert "azure" in with_ib and without
    assert by_key[("azure", "fabric_type")].value is AnswerValue.YES
    ranked = scores(fixture_answers)
    for provider in without:
        assert {values(by_key, provider)[q] for q in FABRIC_QUESTIONS} == {"unknown"}
        assert ranked[provider].score < ranked["azure"].score


def test_scores_lie_in_0_1_and_open_questions_are_exactly_the_non_yes(fixture_answers):
    ranked = scores(fixture_answers)
    for provider, score in ranked.items():
        assert 0.0 <= score.score <= 1.0
        given = {a.question_id: a.value for a in fixture_answers if a.provider == provider}
        not_yes = [q for q in QUESTION_IDS if given[q] is not AnswerValue.YES]
        assert [q.id for q in open_questions(fixture_answers, provider)] == not_yes
        assert list(score.open_question_ids) == not_yes
        assert score.answered == score.yes + score.partial + score.no
        assert score.answered + score.unknown == len(QUESTION_IDS)


def test_a_connection_answers_like_the_path(fixture_warehouse, fixture_answers):
    con = duckdb.connect(str(fixture_warehouse), read_only=True)
    try:
        assert answers(con) == fixture_answers
    finally:
        con.close()


# ------------------------------------------------------------ the made warehouse


def test_a_provider_stating_everything_answers_yes_and_scores_1(made):
    by_key, given = made
    assert set(values(by_key, "ib_cloud").values()) == {"yes"}
    assert scores(given)["ib_cloud"].score == pytest.approx(1.0)
    assert open_questions(given, "ib_cloud") == []
    bandwidth = by_key[("ib_cloud", "bandwidth")].evidence[0]
    assert bandwidth.stated == "400 Gb/s per GPU, 3200 Gb/s per node"
    assert bandwidth.quote == "ib_cloud HGX H100 cluster: quoted sentence"
    terms = by_key[("ib_cloud", "pricing_terms")].evidence
    assert [e.stated for e in terms] == ["spot prices", "reserved prices (reserved_1y)"]


def test_no_fabric_facts_means_unknown_fabric_answers_and_a_lower_score(made):
    by_key, given = made
    dark = values(by_key, "dark_cloud")
    assert {dark[q] for q in FABRIC_QUESTIONS} == {"unknown"}
    assert dark["public_prices"] == "yes"
    assert dark["pricing_terms"] == "unknown"  # on-demand rows only: not a statement of "no"
    ranked = scores(given)
    assert ranked["dark_cloud"].score < ranked["ib_cloud"].score
    assert ranked["dark_cloud"].score == pytest.approx(1 / 16)  # public_prices weighs 1 of 16


def test_unknown_never_counts_as_yes(made):
    by_key, given = made
    vague = values(by_key, "vague_cloud")
    # a fact exists, but states no class, bandwidth, RDMA, topology, size or benchmark
    assert {vague[q] for q in FABRIC_QUESTIONS} == {"unknown"}
    assert vague["public_prices"] == "partial"  # a third party's catalog only
    assert by_key[("vague_cloud", "fabric_type")].reason == (
        "none of the provider's 1 current fabric facts states a fabric class"
    )
    ranked = scores(given)
    assert ranked["vague_cloud"].score == pytest.approx(0.5 / 16)
    assert ranked["vague_cloud"].yes == 0 and ranked["vague_cloud"].unknown == 7
    assert [q.id for q in open_questions(given, "vague_cloud")] == QUESTION_IDS


def test_stated_negatives_and_half_answers(made):
    by_key, given = made
    assert values(by_key, "tcp_cloud")["fabric_type"] == "yes"
    assert values(by_key, "tcp_cloud")["rdma"] == "no"  # stated false: answered, scores 0
    assert by_key[("tcp_cloud", "rdma")].evidence[0].stated == "RDMA false, GPUDirect RDMA false"
    half = values(by_key, "half_cloud")
    assert half["fabric_type"] == "partial"  # one product line of two states its class
    assert by_key[("half_cloud", "fabric_type")].reason.endswith("not for: B200 on-demand")
    assert half["rdma"] == "partial"  # RDMA stated, GPUDirect RDMA not
    assert half["pricing_terms"] == "partial"  # spot only
    assert values(by_key, "solo_cloud")["fabric_type"] == "no"  # single node only
    facts_only = values(by_key, "facts_only")
    assert facts_only["public_prices"] == facts_only["pricing_terms"] == "unknown"
    ranked = scores(given)
    assert ranked["tcp_cloud"].no == 1 and ranked["tcp_cloud"].answered == 3


def test_a_no_scores_like_unknown_but_counts_as_answered(made):
    _, given = made
    tcp = [a for a in given if a.provider == "tcp_cloud"]
    as_unknown = [
        a.model_copy(update={"value": AnswerValue.UNKNOWN, "evidence": ()})
        if a.value is AnswerValue.NO
        else a
        for a in tcp
    ]
    assert scores(tcp)["tcp_cloud"].score == scores(as_unknown)["tcp_cloud"].score
    assert scores(tcp)["tcp_cloud"].answered == scores(as_unknown)["tcp_cloud"].answered + 1


# ------------------------------------------------------------------------ contracts


def evidence():
    return Evidence(
        quote="q",
        source_url="https://example.invalid/",
        observed_at=datetime(2026, 1, 1, tzinfo=UTC),
        obtained_by="curated",
        source="curated_fabric",
        stated="infiniband",
    )


def answer(value, with_evidence, question_id="fabric_type", version=None):
    return Answer(
        provider="p",
        provider_name="P",
        question_id=question_id,
        value=value,
        reason="r",
        evidence=(evidence(),) if with_evidence else (),
        questionnaire_version=version or load_questionnaire().version,
    )


def test_an_answer_cannot_be_known_without_evidence_nor_unknown_with_it():
    with pytest.raises(ValueError, match="'yes' needs evidence"):
        answer(AnswerValue.YES, with_evidence=False)
    with pytest.raises(ValueError, match="'unknown' cannot carry evidence"):
        answer(AnswerValue.UNKNOWN, with_evidence=True)


def test_scores_follow_the_weights_and_missing_answers_count_unknown():
    questionnaire = load_questionnaire()
    only_fabric_yes = [answer(AnswerValue.YES, True)]
    weight = questionnaire.question("fabric_type").weight
    score = scores(only_fabric_yes)["p"]
    assert score.score == pytest.approx(weight / questionnaire.total_weight)
    assert score.unknown == len(QUESTION_IDS) - 1
    all_unknown = [answer(AnswerValue.UNKNOWN, False, q) for q in QUESTION_IDS]
    assert scores(all_unknown)["p"].score == 0.0


def test_answers_of_another_version_or_provider_are_refused():
    old = [answer(AnswerValue.YES, True, version="0.9")]
    with pytest.raises(TransparencyError, match="version"):
        scores(old)
    with pytest.raises(TransparencyError, match="no answers for provider 'q'"):
        open_questions([answer(AnswerValue.YES, True)], "q")


def test_third_party_evidence_alone_is_partial_never_yes(made):
    by_key, _ = made
    for question in ("fabric_type", "bandwidth", "rdma", "topology", "cluster_size"):
        answer = by_key[("blog_cloud", question)]
        assert answer.value is AnswerValue.PARTIAL, question
        assert "third-party" in answer.reason
        assert answer.evidence[0].source_grade == "third_party"
    # where the provider's own page states it too, that page is the evidence and it is a yes
    for question in ("fabric_type", "bandwidth"):
        answer = by_key[("both_cloud", question)]
        assert answer.value is AnswerValue.YES, question
        assert answer.evidence[0].source_grade == "provider"
        assert answer.evidence[0].instance_type == "8x H100"
    # what only the blog states (the topology) stays partial
    assert by_key[("both_cloud", "topology")].value is AnswerValue.PARTIAL
