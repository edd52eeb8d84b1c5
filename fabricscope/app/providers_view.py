"""The transparency questionnaire shaped for the Providers page, and the providers' replies
entered on it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import streamlit as st

from fabricscope.config import ConfigError
from fabricscope.evidence.transparency import (
    Answer,
    AnswerValue,
    Questionnaire,
    replied_by_provider,
    scores,
)
from fabricscope.procurement.entries import EntryFileError
from fabricscope.procurement.rfi import parse, store, template_csv, template_rows
from fabricscope.warehouse.db import WarehouseError
from fabricscope.warehouse.models import utc_now

MARK: dict[AnswerValue, str] = {
    AnswerValue.YES: "✅ yes",
    AnswerValue.PARTIAL: "🟡 partial",
    AnswerValue.NO: "❌ no",
    AnswerValue.UNKNOWN: "❔ unknown",
}


def answer_matrix(answers: Sequence[Answer], questionnaire: Questionnaire) -> pd.DataFrame:
    """One row per provider: its score, how many questions it answered in reply (and when
    last), then one column per question (yes/partial/no/unknown; "(reply)" where the
    provider's own answer decides it)."""
    question_ids = [q.id for q in questionnaire.questions]
    columns = ["provider", "name", "score", "replied", *question_ids]
    if not answers:
        return pd.DataFrame(columns=columns)
    by_provider = scores(answers, questionnaire)
    rows = []
    for provider, score in by_provider.items():
        given = {a.question_id: a for a in answers if a.provider == provider}
        replies = [a for a in given.values() if replied_by_provider(a)]
        last = max(
            (a.evidence[0].source_date for a in replies if a.evidence[0].source_date), default=None
        )
        row: dict[str, object] = {
            "provider": provider,
            "name": score.provider_name,
            "score": score.score,
            # how many questions the provider answered itself, and when it last did
            "replied": f"{len(replies)}, last on {last}" if replies else None,
        }
        for question_id in question_ids:
            answer = given.get(question_id)
            mark = MARK[answer.value if answer else AnswerValue.UNKNOWN]
            row[question_id] = f"{mark} (reply)" if answer and replied_by_provider(answer) else mark
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


STORED = "providers_replies_stored"


def replies_section(path: Path, answers: Sequence[Answer]) -> None:
    """The answers template to send, and a filled-in one read back: each refused row with its
    line and field, the good ones stored on request (fabricscope/procurement/rfi.py)."""
    if STORED in st.session_state:
        st.success(st.session_state.pop(STORED))
    providers = sorted({a.provider for a in answers})
    st.markdown(
        "Send each provider the questions its published evidence leaves open; enter what it "
        "answers (yes, partial or no, its words, a link or attachment, the day and who "
        "answered) in the template and upload it here. A reply decides its question as the "
        "provider's own evidence; a later reply replaces an earlier one."
    )
    template = template_csv(template_rows(providers, answers))
    st.download_button(
        "Answers template (CSV, the open questions)",
        template,
        file_name="fabricscope-rfi-answers.csv",
        mime="text/csv",
        key="providers_template",
        on_click="ignore",
    )
    upload = st.file_uploader("Filled-in answers (CSV or JSON)", key="providers_replies")
    if upload is None:
        return
    try:
        entered, refused = parse(upload.getvalue(), upload.name)
    except EntryFileError as exc:
        st.error(f"This file cannot be used: {exc}")
        return
    for problem in refused:
        st.error(f"Refused: {upload.name} {problem}")
    st.caption(f"{len(entered)} answers read, {len(refused)} rows refused.")
    if entered and st.button(
        f"Store the {len(entered)} answers", type="primary", key="providers_store"
    ):
        try:
            done = store(path, entered, utc_now(), upload.name)
        except (ConfigError, WarehouseError) as exc:
            st.error(f"Not stored: {exc}")
        else:
            st.session_state[STORED] = (
                f"Stored {len(done.stored)} answers ({len(done.already)} already stored); the "
                "score and the memo use them from the new snapshot."
            )
            st.rerun()
