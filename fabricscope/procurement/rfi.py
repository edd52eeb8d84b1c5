"""Providers' answers to the questionnaire (the RFI): a template of the questions to send,
the answers imported back from it, stored append-only, and read by the transparency score,
the Providers matrix and the memo as the provider's own word (docs/TRANSPARENCY.md).

A file is read as quotes are (fabricscope/procurement/entries.py): a bad row is refused with
its line and field, the others are stored; a file that is no answers file is refused whole.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from fabricscope.evidence.transparency import Answer, AnswerValue, load_questionnaire
from fabricscope.procurement import entries
from fabricscope.procurement.acceptance import AcceptanceTest, checklist
from fabricscope.procurement.entries import RowError, Template, blank_to_none, validation_errors
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import read_frame
from fabricscope.warehouse.load import RFI_ANSWERS, EntriesStored, publish_entries
from fabricscope.warehouse.models import RFI_ANSWER_FIELDS, RfiAnswer

# the template carries each question's text beside its id, for whoever answers; it is not read
QUESTION_TEXT = "question"
ANSWER_TEMPLATE = Template.of(RfiAnswer, "fabricscope answers template", (QUESTION_TEXT,))
TEMPLATE_COLUMNS = (
    "provider",
    "question_id",
    QUESTION_TEXT,
    *(f for f in RFI_ANSWER_FIELDS if f not in ("provider", "question_id")),
)


@dataclass(frozen=True)
class EnteredAnswer:
    """An answer as checked, with where it came from."""

    answer: RfiAnswer
    where: str
    line: int | None


def template_rows(
    providers: Iterable[str], answers: Sequence[Answer] = (), open_only: bool = True
) -> list[dict[str, Any]]:
    """One row per provider and item to ask, the answer's cells empty: the questionnaire's
    questions (with ``open_only``, those not answered yes by the warehouse's facts or an
    earlier reply), then the acceptance tests and the contract terms (acceptance.json)."""
    questionnaire = load_questionnaire()
    known = {(a.provider, a.question_id): a.value for a in answers}
    items = checklist()
    rows = []
    for provider in providers:
        asked = [
            (q.id, q.text)
            for q in questionnaire.questions
            if not (open_only and known.get((provider, q.id)) is AnswerValue.YES)
        ]
        asked += [(test.id, acceptance_question(test)) for test in items.tests]
        asked += [(term.id, term.question) for term in items.terms]
        for question_id, text in asked:
            row = dict.fromkeys(TEMPLATE_COLUMNS, "")
            row |= {"provider": provider, "question_id": question_id, QUESTION_TEXT: text}
            rows.append(row)
    return rows


def acceptance_question(test: AcceptanceTest) -> str:
    """An acceptance test as the RFI asks it."""
    return (
        f"Before acceptance, will you demonstrate {test.demonstrate}? How: {test.how}. "
        f"Pass: {test.threshold}."
    )


def template_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The answers template as CSV: the header, then ``rows`` (``template_rows``)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TEMPLATE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def template_json(rows: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(list(rows), indent=2) + "\n"


def field_help() -> list[dict[str, str]]:
    return entries.field_help(RfiAnswer)


def check(raw: Mapping[str, Any], where: str) -> RfiAnswer | list[RowError]:
    """One row as an answer, or what is wrong with it; the question must be one of the
    questionnaire's."""
    values = blank_to_none(raw)
    try:
        answer = RfiAnswer.model_validate(values)
    except ValidationError as exc:
        return validation_errors(exc, where)
    ids = [*(q.id for q in load_questionnaire().questions), *checklist().ids]
    if answer.question_id not in ids:
        return [
            RowError(
                where,
                "question_id",
                f"no question {answer.question_id!r} in the RFI; one of {', '.join(ids)}",
            )
        ]
    return answer


def parse(data: bytes, name: str) -> tuple[list[EnteredAnswer], list[RowError]]:
    """The answers in a CSV or JSON file and the rows refused; raises EntryFileError when the
    file is no answers file at all."""
    taken, refused = entries.parse(data, name, ANSWER_TEMPLATE, check)
    return [EnteredAnswer(answer, where, line) for answer, where, line in taken], refused


def content_sha256(answer: RfiAnswer) -> str:
    """What identifies an answer: its fields (not who entered it)."""
    fields = answer.model_dump(mode="json", exclude={"entered_by"})
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def answer_id(answer: RfiAnswer) -> str:
    """An answer's id: the first ten hex digits of its content's SHA-256."""
    return f"a-{content_sha256(answer)[:10]}"


def record(entered: EnteredAnswer, entered_at: datetime, file_name: str | None) -> dict[str, Any]:
    """The row stored for one answer (dates as ISO text, which the table's DATE columns read)."""
    answer = entered.answer
    sha = content_sha256(answer)
    return {
        **answer.model_dump(mode="json"),
        "answer_id": f"a-{sha[:10]}",
        "questionnaire_version": load_questionnaire().version,
        "entered_at": entered_at,
        "file_name": file_name,
        "line": entered.line,
        "content_sha256": sha,
    }


def store(
    warehouse: Path,
    entered: Sequence[EnteredAnswer],
    entered_at: datetime,
    file_name: str | None = None,
    lock_wait_s: float = 0.0,
) -> EntriesStored:
    """Store the checked answers as one snapshot (an answer already stored is stored once)."""
    rows = [record(e, entered_at, file_name) for e in entered]
    return publish_entries(warehouse, RFI_ANSWERS, rows, lock_wait_s)


def stored_answers(warehouse: Path) -> pd.DataFrame:
    """Every answer entered, oldest first (the current one per question is the latest given)."""
    _, frame = read_frame(warehouse, reads.sql("rfi_answers"))
    return frame
