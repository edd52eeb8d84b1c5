"""The transparency questionnaire shaped for the Providers page (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from fabricscope.evidence.transparency import Answer, AnswerValue, Questionnaire, scores

MARK: dict[AnswerValue, str] = {
    AnswerValue.YES: "✅ yes",
    AnswerValue.PARTIAL: "🟡 partial",
    AnswerValue.NO: "❌ no",
    AnswerValue.UNKNOWN: "❔ unknown",
}


def answer_matrix(answers: Sequence[Answer], questionnaire: Questionnaire) -> pd.DataFrame:
    """One row per provider: its score, then one column per question (yes/partial/no/unknown)."""
    question_ids = [q.id for q in questionnaire.questions]
    columns = ["provider", "name", "score", *question_ids]
    if not answers:
        return pd.DataFrame(columns=columns)
    by_provider = scores(answers, questionnaire)
    rows = []
    for provider, score in by_provider.items():
        given = {a.question_id: a.value for a in answers if a.provider == provider}
        row: dict[str, object] = {
            "provider": provider,
            "name": score.provider_name,
            "score": score.score,
        }
        for question_id in question_ids:
            row[question_id] = MARK[given.get(question_id, AnswerValue.UNKNOWN)]
        rows.append(row)
    return pd.DataFrame(rows, columns=columns).sort_values(
        ["score", "provider"], ascending=[False, True], ignore_index=True
    )


def questions_frame(questionnaire: Questionnaire) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"question_id": q.id, "question": q.text, "weight": q.weight, "why it matters": q.why}
            for q in questionnaire.questions
        ]
    )


def evidence_frame(answers: Sequence[Answer], provider: str) -> pd.DataFrame:
    """Every answer for ``provider`` with each piece of evidence (quote, link, dates)."""
    rows = []
    for answer in answers:
        if answer.provider != provider:
            continue
        base = {
            "question_id": answer.question_id,
            "answer": MARK[answer.value],
            "reason": answer.reason,
        }
        if not answer.evidence:
            rows.append(
                {
                    **base,
                    "quote": None,
                    "source_url": None,
                    "observed": None,
                    "source_date": None,
                    "obtained_by": None,
                    "grade": None,
                    "instance_type": None,
                }
            )
        for evidence in answer.evidence:
            rows.append(
                {
                    **base,
                    "quote": evidence.quote,
                    "source_url": evidence.source_url,
                    "observed": evidence.observed_at.strftime("%Y-%m-%d"),
                    "source_date": evidence.source_date.isoformat()
                    if evidence.source_date
                    else None,
                    "obtained_by": evidence.obtained_by,
                    "grade": evidence.source_grade,
                    "instance_type": evidence.instance_type,
                }
            )
    return pd.DataFrame(rows)
