"""The Shortlist page's downloads, built in memory from one Shortlist.

The CSV is exactly ``fabricscope.procurement.shortlist.csv_frame`` (the ranking rows, every
column), so it equals what ``fabricscope rank`` and ``fabricscope export --shortlist`` give for
the same inputs. The reviewer's notes go where a reader looks for them: a ``notes`` sheet in the
workbook and a section at the end of the memo.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from fabricscope.procurement import shortlist as shortlisting

NOTE_COLUMNS = ["rank", "provider", "instance_type", "region", "pricing_tier", "note"]


@dataclass(frozen=True)
class Downloads:
    csv: bytes
    xlsx: bytes
    memo: str
    answers_template: str  # the open questions' answers template (CSV), sent with the memo


def csv_bytes(shortlist: shortlisting.Shortlist) -> bytes:
    return shortlisting.csv_frame(shortlist).to_csv(index=False).encode("utf-8")


def notes_frame(shortlist: shortlisting.Shortlist, notes: Mapping[str, str]) -> pd.DataFrame:
    """The shortlisted offers with the reviewer's note for each (empty where none)."""
    rows = shortlist.rows
    frame = rows[["rank", "provider", "instance_type", "region", "pricing_tier"]].copy()
    frame["note"] = [notes.get(key, "") for key in rows["offer_key"]]
    frame.index = pd.Index(rows["offer_key"], name="offer_key")
    return frame


def merge_notes(notes: Mapping[str, str], edited: pd.DataFrame) -> dict[str, str]:
    """``notes`` updated from an edited ``notes_frame`` (indexed by offer key)."""
    merged = dict(notes)
    for key, text in edited["note"].items():
        text = "" if text is None or (isinstance(text, float) and pd.isna(text)) else str(text)
        if text.strip():
            merged[str(key)] = text.strip()
        else:
            merged.pop(str(key), None)
    return merged


def memo_text(shortlist: shortlisting.Shortlist, notes: Mapping[str, str]) -> str:
    text = shortlisting.memo(shortlist)
    written = notes_frame(shortlist, notes)
    written = written[written["note"] != ""]
    if written.empty:
        return text
    lines = ["", "## Reviewer notes", ""]
    for key, row in written.iterrows():
        lines.append(f"- {row['provider']} {row['instance_type']} (`{key}`): {row['note']}")
    return text.rstrip("\n") + "\n" + "\n".join(lines) + "\n"


def xlsx_bytes(shortlist: shortlisting.Shortlist, notes: Mapping[str, str]) -> bytes:
    """The pipeline's workbook, plus a ``notes`` sheet when there are notes."""
    with tempfile.TemporaryDirectory(prefix="fabricscope-shortlist-") as folder:
        workbook = shortlisting.write(shortlist, Path(folder) / "shortlist")[1]
        if notes:
            with pd.ExcelWriter(workbook, engine="openpyxl", mode="a") as writer:
                notes_frame(shortlist, notes).to_excel(writer, sheet_name="notes")
        return workbook.read_bytes()


def downloads(shortlist: shortlisting.Shortlist, notes: Mapping[str, str]) -> Downloads:
    return Downloads(
        csv_bytes(shortlist),
        xlsx_bytes(shortlist, notes),
        memo_text(shortlist, notes),
        shortlisting.answers_template(shortlist),
    )
