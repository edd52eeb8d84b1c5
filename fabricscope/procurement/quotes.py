"""Quotes the buyer received: entered one at a time or imported from a CSV or JSON file,
checked against the ``Quote`` contract (fabricscope/warehouse/models.py), stored append-only
and ranked beside the list offers (``quote_offers``).

A file is read whole first: a row that breaks the contract is refused with its line (a JSON
item's number) and field, and every other row is stored. A file that is not a quotes file at
all (an unknown column, a missing required one, not CSV or JSON) is refused in one line and
nothing of it is stored. docs/QUOTES.md documents the template.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from fabricscope.model.hardware import HardwareError
from fabricscope.rank import catalog
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import read_frame
from fabricscope.warehouse.load import QuotesStored, publish_quotes
from fabricscope.warehouse.models import QUOTE_FIELDS, Quote

MAX_FILE_BYTES = 5_000_000
MAX_ROWS = 10_000
# the fields a row must give (the others may be left empty)
REQUIRED = tuple(name for name, spec in Quote.model_fields.items() if spec.is_required())


class QuoteFileError(ValueError):
    """A file that cannot be read as quotes at all; nothing of it is stored."""


@dataclass(frozen=True)
class RowError:
    """One refused row: where it is and what is wrong with which field."""

    where: str  # "line 4" (CSV) or "item 2" (JSON)
    field: str | None
    message: str

    def __str__(self) -> str:
        field = f", field {self.field}" if self.field else ""
        return f"{self.where}{field}: {self.message}"


@dataclass(frozen=True)
class Entered:
    """A quote as checked, with where it came from."""

    quote: Quote
    where: str
    line: int | None


def template_csv() -> str:
    """The quotes template: the header of a CSV file, one column per field."""
    return ",".join(QUOTE_FIELDS) + "\n"


def template_json() -> str:
    """The quotes template as JSON: a list of one object, every field empty."""
    return json.dumps([dict.fromkeys(QUOTE_FIELDS)], indent=2) + "\n"


def field_help() -> list[dict[str, str]]:
    """Each field: its name, whether it is required, and what it means (the contract's words)."""
    return [
        {
            "field": name,
            "required": "yes" if spec.is_required() else "no",
            "meaning": spec.description or "",
        }
        for name, spec in Quote.model_fields.items()
    ]


def check(raw: Mapping[str, Any], where: str) -> Quote | list[RowError]:
    """One row as a Quote, or what is wrong with it (field by field). Empty cells are unknown;
    the GPU is resolved to its canonical id (an alias is accepted)."""
    values = {k: (None if isinstance(v, str) and not v.strip() else v) for k, v in raw.items()}
    gpu = values.get("gpu_model")
    if isinstance(gpu, str):
        try:
            values["gpu_model"] = catalog.resolve_gpu(gpu.strip())
        except HardwareError as exc:
            return [RowError(where, "gpu_model", str(exc))]
    try:
        return Quote.model_validate(values)
    except ValidationError as exc:
        return [
            RowError(where, ".".join(str(p) for p in e["loc"]) or None, _message(e))
            for e in exc.errors()
        ]


def _message(error: Mapping[str, Any]) -> str:
    text = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "missing":
        return "required, and empty"
    given = error.get("input")
    if isinstance(given, str | int | float) and error["type"] != "extra_forbidden":
        return f"{text} (got {str(given)[:80]!r})"
    return text


def parse(data: bytes, name: str) -> tuple[list[Entered], list[RowError]]:
    """The quotes in a CSV or JSON file (by its name's suffix, else by its first character)
    and the rows refused; raises QuoteFileError when the file is no quotes file at all."""
    if len(data) > MAX_FILE_BYTES:
        raise QuoteFileError(f"{name}: larger than {MAX_FILE_BYTES // 1_000_000} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QuoteFileError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    suffix = Path(name).suffix.lower()
    is_json = suffix == ".json" or (suffix != ".csv" and text.lstrip()[:1] in ("[", "{"))
    rows = _json_rows(text, name) if is_json else _csv_rows(text, name)
    if len(rows) > MAX_ROWS:
        raise QuoteFileError(f"{name}: {len(rows):,} rows; at most {MAX_ROWS:,} at a time")
    quotes: list[Entered] = []
    errors: list[RowError] = []
    for where, line, raw in rows:
        checked = [raw] if isinstance(raw, RowError) else check(raw, where)
        if isinstance(checked, Quote):
            quotes.append(Entered(checked, where, line))
        else:
            errors.extend(checked)
    return quotes, errors


def _columns_known(columns: Sequence[str], name: str, where: str) -> None:
    unknown = [c for c in columns if c not in QUOTE_FIELDS]
    if unknown:
        raise QuoteFileError(
            f"{name}{where}: unknown column {unknown[0]!r}; the columns are those of "
            "`fabricscope quote template`"
        )


def _csv_rows(text: str, name: str) -> list[tuple[str, int | None, dict[str, Any] | RowError]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise QuoteFileError(f"{name}: empty; give the template's header and a row") from None
    except csv.Error as exc:
        raise QuoteFileError(f"{name} line 1: not CSV ({exc})") from None
    header = [h.strip() for h in header]
    _columns_known(header, name, " line 1")
    if len(set(header)) != len(header):
        raise QuoteFileError(f"{name} line 1: a column is named twice")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise QuoteFileError(f"{name} line 1: no column {missing[0]!r}, which is required")
    rows: list[tuple[str, int | None, dict[str, Any] | RowError]] = []
    start = reader.line_num + 1
    try:
        for cells in reader:
            if not any(c.strip() for c in cells):
                start = reader.line_num + 1
                continue
            where = f"line {start}"
            if len(cells) != len(header):
                problem = RowError(where, None, f"{len(cells)} cells; the header has {len(header)}")
                rows.append((where, start, problem))
            else:
                rows.append((where, start, dict(zip(header, cells, strict=True))))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise QuoteFileError(f"{name} line {reader.line_num}: not CSV ({exc})") from None
    return rows


def _json_rows(text: str, name: str) -> list[tuple[str, int | None, dict[str, Any] | RowError]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuoteFileError(f"{name} line {exc.lineno}: not JSON ({exc.msg})") from None
    items = data if isinstance(data, list) else [data]
    rows: list[tuple[str, int | None, dict[str, Any] | RowError]] = []
    for number, item in enumerate(items, start=1):
        where = f"item {number}"
        if not isinstance(item, dict):
            raise QuoteFileError(f"{name} {where}: not an object of the template's fields")
        _columns_known(list(item), name, f" {where}")
        rows.append((where, None, item))
    return rows


def content_sha256(quote: Quote) -> str:
    """What identifies a quote: its fields (not who entered it or when)."""
    fields = quote.model_dump(mode="json", exclude={"entered_by", "notes"})
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def record(entered: Entered, entered_at: datetime, file_name: str | None) -> dict[str, Any]:
    """The row stored for one quote."""
    quote = entered.quote
    sha = content_sha256(quote)
    row: dict[str, Any] = {
        name: _stored(value) for name, value in quote.model_dump(mode="python").items()
    }
    return {
        **row,
        "quote_id": f"q-{sha[:10]}",
        "price_usd_per_gpu_hour": quote.price_usd_per_gpu_hour,
        "entered_at": entered_at,
        "file_name": file_name,
        "line": entered.line,
        "content_sha256": sha,
    }


def _stored(value: Any) -> Any:
    if hasattr(value, "value") and not isinstance(value, date | datetime):
        return value.value  # an enum
    if value is not None and type(value).__name__ in ("HttpUrl", "Url"):
        return str(value)
    return value


def store(
    warehouse: Path,
    entered: Sequence[Entered],
    entered_at: datetime,
    file_name: str | None = None,
    lock_wait_s: float = 0.0,
) -> QuotesStored:
    """Store the checked quotes as one snapshot (a quote already stored is stored once)."""
    return publish_quotes(
        warehouse, [record(e, entered_at, file_name) for e in entered], lock_wait_s
    )


def stored_quotes(warehouse: Path, today: date) -> pd.DataFrame:
    """Every stored quote, oldest first, with ``expired`` (its last valid day before
    ``today``); an empty frame for a warehouse without quotes yet."""
    _, frame = read_frame(warehouse, reads.sql("quotes"))
    valid = pd.to_datetime(frame["valid_until"]).dt.date
    frame["expired"] = [bool(v is not None and not pd.isna(v) and v < today) for v in valid]
    return frame
