"""Providers' answers to the questionnaire: the template sent with the memo, the replies
imported back (bad rows refused with their line and field), and what they change: the answer,
its evidence and grade, the score, the open questions, the Providers matrix and the memo."""

from __future__ import annotations

import csv
import io
import json
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pandas as pd
import pytest

from fabricscope.app.providers_view import answer_matrix
from fabricscope.evidence import transparency
from fabricscope.model.workloads import preset
from fabricscope.procurement import acceptance, entries, rfi, shortlist
from fabricscope.rank.ranking import RankRequest, rank
from fabricscope.warehouse.db import current_snapshot
from tests.helpers import fabricscope

ENTERED_AT = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
NOW = datetime(2026, 12, 15, tzinfo=UTC)


@pytest.fixture
def warehouse(tmp_path: Path, fixture_warehouse: Path) -> Path:
    path = tmp_path / "warehouse.duckdb"
    shutil.copy(fixture_warehouse, path)
    return path


def filled(rows: list[dict[str, str]], answers: dict[str, dict[str, str]]) -> bytes:
    """The template's rows with the answers given for some questions (the others dropped)."""
    kept = [{**row, **answers[row["question_id"]]} for row in rows if row["question_id"] in answers]
    return rfi.template_csv(kept).encode()


REPLY = {
    "value": "yes",
    "answer": "Every 1-Click Cluster node has 8x 400 Gb/s InfiniBand NDR, one per GPU.",
    "evidence_url": "https://lambda.example.invalid/rfi/answers.pdf",
    "answered_on": "2026-12-02",
    "answered_by": "J. Doe, solutions architect",
    "entered_by": "pat",
}


def test_the_template_asks_only_what_the_evidence_leaves_open(warehouse):
    answers = transparency.answers(warehouse)
    open_ids = [q.id for q in transparency.open_questions(answers, "lambda")]
    rows = rfi.template_rows(["lambda"], answers)
    # the open questions, then what to demonstrate before acceptance and the contract terms
    checklist = list(acceptance.checklist().ids)
    assert [r["question_id"] for r in rows] == [*open_ids, *checklist] and open_ids
    assert all(r["question"] and not r["value"] for r in rows)
    every = rfi.template_rows(["lambda"], answers, open_only=False)
    assert len(every) == len(transparency.load_questionnaire().questions) + len(checklist)
    header = next(csv.reader(io.StringIO(rfi.template_csv(rows))))
    assert header[:3] == ["provider", "question_id", "question"]


def test_a_reply_decides_its_question_as_the_providers_own_dated_evidence(warehouse):
    before = transparency.answers(warehouse)
    question = transparency.open_questions(before, "lambda")[0].id
    old_score = transparency.scores(before)["lambda"]
    rows = rfi.template_rows(["lambda"], before)
    entered, refused = rfi.parse(filled(rows, {question: REPLY}), "replies.csv")
    assert not refused and len(entered) == 1
    stored = rfi.store(warehouse, entered, ENTERED_AT, "replies.csv")
    assert len(stored.stored) == 1
    after = transparency.answers(warehouse)
    answer = next(a for a in after if a.provider == "lambda" and a.question_id == question)
    assert answer.value is transparency.AnswerValue.YES
    assert transparency.replied_by_provider(answer)
    assert answer.reason.startswith(
        "answered yes by J. Doe, solutions architect on 2026-12-02 in reply to the questionnaire"
    )
    given = answer.evidence[0]
    assert given.source_grade == "provider" and given.obtained_by == "rfi"
    assert given.source_date == date(2026, 12, 2) and given.quote == REPLY["answer"]
    assert given.source_url == REPLY["evidence_url"]
    old = next(a for a in before if a.provider == "lambda" and a.question_id == question)
    assert answer.evidence[1:] == old.evidence  # what the published facts say follows
    new_score = transparency.scores(after)["lambda"]
    assert new_score.score > old_score.score
    assert question not in new_score.open_question_ids
    # the Providers matrix marks it and counts the replies
    matrix = answer_matrix(after, transparency.load_questionnaire()).set_index("provider")
    assert matrix.loc["lambda", question].endswith("(reply)")
    assert matrix.loc["lambda", "replied"] == "1, last on 2026-12-02"
    # a later reply replaces it; the same reply again is stored once
    later = {**REPLY, "value": "partial", "answered_on": "2026-12-09", "answer": "Most pools."}
    entered, _ = rfi.parse(filled(rows, {question: later}), "later.csv")
    rfi.store(warehouse, entered, ENTERED_AT, "later.csv")
    again, _ = rfi.parse(filled(rows, {question: REPLY}), "replies.csv")
    assert rfi.store(warehouse, again, ENTERED_AT).already == stored.stored
    latest = next(
        a
        for a in transparency.answers(warehouse)
        if a.provider == "lambda" and a.question_id == question
    )
    assert latest.value is transparency.AnswerValue.PARTIAL
    assert latest.evidence[0].quote == "Most pools."
    assert len(rfi.stored_answers(warehouse)) == 2


def test_bad_rows_are_refused_with_their_line_and_field_and_the_others_kept():
    text = (
        "provider,question_id,question,value,answer,answered_on,answered_by,entered_by\n"
        "lambda,rdma,Do you...,yes,GPUDirect RDMA everywhere,2026-12-01,J. Doe,pat\n"
        "lambda,colour,,yes,blue,2026-12-01,J. Doe,pat\n"
        "lambda,rdma,,maybe,hmm,2026-12-01,J. Doe,pat\n"
        "lambda,topology,,no,,2026-12-01,J. Doe,pat\n"
        "lambda,bandwidth,,yes,400G,,J. Doe,pat\n"
    )
    entered, refused = rfi.parse(text.encode(), "replies.csv")
    assert [e.answer.question_id for e in entered] == ["rdma"]
    said = [str(r) for r in refused]
    assert said[0].startswith("line 3, field question_id: no question 'colour' in the")
    assert said[1] == "line 4, field value: Input should be 'yes', 'partial' or 'no' (got 'maybe')"
    assert said[2] == "line 5, field answer: required, and empty"
    assert said[3] == "line 6, field answered_on: required, and empty"
    with pytest.raises(entries.EntryFileError, match="unknown column 'colour'"):
        rfi.parse(b"provider,colour\nlambda,red\n", "x.csv")
    with pytest.raises(entries.EntryFileError, match="no column 'question_id'"):
        rfi.parse(b"provider,value\nlambda,yes\n", "x.csv")
    items = [
        {
            "provider": "lambda",
            "question_id": "rdma",
            "value": "no",
            "answer": "No.",
            "answered_on": "2026-12-01",
            "answered_by": "J",
            "entered_by": "p",
        }
    ]
    assert len(rfi.parse(json.dumps(items).encode(), "x.json")[0]) == 1


def test_the_memo_says_what_was_answered_by_whom_and_when_and_sends_the_template(
    warehouse, tmp_path
):
    before = transparency.answers(warehouse)
    question = transparency.open_questions(before, "lambda")[0]
    rows = rfi.template_rows(["lambda"], before)
    entered, _ = rfi.parse(filled(rows, {question.id: REPLY}), "replies.csv")
    rfi.store(warehouse, entered, ENTERED_AT, "replies.csv")
    result = rank(warehouse, RankRequest(workload=preset("llama3-70b"), gpu_counts=(512,)), NOW)
    keys = result.offers.loc[result.offers["provider"] == "lambda", "offer_key"].head(1).tolist()
    chosen = shortlist.from_result(result, offer_keys=keys)
    memo = shortlist.memo(chosen)
    assert "Answered by Lambda in reply:" in memo
    assert (
        f"{question.text} **yes** (answered yes by J. Doe, solutions architect on 2026-12-02)"
        in (memo)
    )
    assert REPLY["answer"] in memo
    assert "Still open:" in memo
    written = shortlist.write(chosen, tmp_path / "short")
    template = written[3]
    assert template.name == "short-rfi-answers.csv"
    sent = list(csv.DictReader(io.StringIO(template.read_text(encoding="utf-8"))))
    assert question.id not in {r["question_id"] for r in sent}  # answered yes: not asked again
    assert {r["provider"] for r in sent} == {"lambda"}
    assert [r["question_id"] for r in sent] == [
        *(q.id for q in transparency.open_questions(chosen.answers, "lambda")),
        *acceptance.checklist().ids,
    ]


def test_the_cli_writes_the_template_and_imports_the_replies(warehouse, tmp_path):
    env = {"FABRICSCOPE_WAREHOUSE": str(warehouse), "COLUMNS": "200"}
    template = fabricscope("answers", "template", "-p", "lambda", env=env)
    assert template.returncode == 0, template.stderr
    rows = list(csv.DictReader(io.StringIO(template.stdout)))
    question = rows[0]["question_id"]
    path = tmp_path / "replies.csv"
    body = filled(rows, {question: REPLY}).decode()
    path.write_text(body + "lambda,nope,,yes,x,,,2026-12-01,J,p\n", encoding="utf-8")
    before = current_snapshot(warehouse)
    done = fabricscope("answers", "import", str(path), env=env)
    assert done.returncode == 1 and "refused: replies.csv line 3, field question_id" in done.stderr
    assert "1 answers stored, 0 already stored" in done.stdout
    assert current_snapshot(warehouse).snapshot_id == before.snapshot_id + 1
    listed = fabricscope("answers", "list", "-f", "json", env=env)
    (row,) = json.loads(listed.stdout)
    assert row["question_id"] == question and row["answered_on"] == "2026-12-02"
    unknown = fabricscope("answers", "template", "-p", "nobody", env=env)
    assert unknown.returncode == 2 and "no provider 'nobody'" in unknown.stderr
    assert pd.notna(row["entered_at"])
