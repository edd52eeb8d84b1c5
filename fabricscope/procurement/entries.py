"""Files a buyer fills in and imports (quotes, providers' answers): a CSV or JSON file of a
template's fields, read whole, each row checked against its contract.

A row that breaks the contract is refused with its line (a JSON item's number) and field, and
the other rows are kept. A file that is not such a file at all (an unknown column, a required
one missing, not UTF-8, not CSV or JSON, too large) raises ``EntryFileError`` in one line, and
nothing of it is kept.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

MAX_FILE_BYTES = 5_000_000
MAX_ROWS = 10_000


class EntryFileError(ValueError):
    """A file that cannot be read as the template's rows at all; nothing of it is kept."""


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
class Template:
    """What a file of one kind holds: its fields in order, those a row must give, columns a
    row may carry that are not read (the question's text in an answers file), and the
    command that writes the template (named in errors)."""

    fields: tuple[str, ...]
    required: tuple[str, ...]
    command: str
    ignored: tuple[str, ...] = ()

    @classmethod
    def of(cls, model: type[BaseModel], command: str, ignored: tuple[str, ...] = ()) -> Template:
        fields = tuple(model.model_fields)
        required = tuple(n for n, spec in model.model_fields.items() if spec.is_required())
        return cls(fields, required, command, ignored)


T = TypeVar("T")

# one row of a file: where it is ("line 4"), its first line (CSV only), and its cells by
# column (or why the row cannot be read)
Row = tuple[str, int | None, dict[str, Any] | RowError]


def blank_to_none(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A row's cells with empty text as unknown (None)."""
    return {k: (None if isinstance(v, str) and not v.strip() else v) for k, v in raw.items()}


def validation_errors(exc: ValidationError, where: str) -> list[RowError]:
    """A contract's complaints about one row, field by field."""
    return [
        RowError(where, ".".join(str(p) for p in e["loc"]) or None, _message(e))
        for e in exc.errors()
    ]


def _message(error: Mapping[str, Any]) -> str:
    text = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "missing" or ("input" in error and error["input"] is None):
        return "required, and empty"  # an empty cell is unknown, where a value is needed
    given = error.get("input")
    if isinstance(given, str | int | float) and error["type"] != "extra_forbidden":
        return f"{text} (got {str(given)[:80]!r})"
    return text


def parse(
    data: bytes,
    name: str,
    template: Template,
    check: Callable[[dict[str, Any], str], T | list[RowError]],
) -> tuple[list[tuple[T, str, int | None]], list[RowError]]:
    """Every row of a CSV or JSON file (by its name's suffix, else by its first character)
    checked by ``check``: (what it gave, where, line) for the rows it took, and the refused
    rows; raises EntryFileError when the file is no such file at all."""
    if len(data) > MAX_FILE_BYTES:
        raise EntryFileError(f"{name}: larger than {MAX_FILE_BYTES // 1_000_000} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EntryFileError(f"{name}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    suffix = Path(name).suffix.lower()
    is_json = suffix == ".json" or (suffix != ".csv" and text.lstrip()[:1] in ("[", "{"))
    rows = _json_rows(text, name, template) if is_json else _csv_rows(text, name, template)
    if len(rows) > MAX_ROWS:
        raise EntryFileError(f"{name}: {len(rows):,} rows; at most {MAX_ROWS:,} at a time")
    taken: list[tuple[T, str, int | None]] = []
    errors: list[RowError] = []
    for where, line, raw in rows:
        if isinstance(raw, RowError):
            errors.append(raw)
            continue
        read = {k: v for k, v in raw.items() if k not in template.ignored}
        checked = check(read, where)
        if isinstance(checked, list):
            errors.extend(checked)
        else:
            taken.append((checked, where, line))
    return taken, errors


def _columns_known(columns: Sequence[str], name: str, where: str, template: Template) -> None:
    unknown = [c for c in columns if c not in template.fields and c not in template.ignored]
    if unknown:
        raise EntryFileError(
            f"{name}{where}: unknown column {unknown[0]!r}; the columns are those of "
            f"`{template.command}`"
        )


def _csv_rows(text: str, name: str, template: Template) -> list[Row]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise EntryFileError(f"{name}: empty; give the template's header and a row") from None
    except csv.Error as exc:
        raise EntryFileError(f"{name} line 1: not CSV ({exc})") from None
    header = [h.strip() for h in header]
    _columns_known(header, name, " line 1", template)
    if len(set(header)) != len(header):
        raise EntryFileError(f"{name} line 1: a column is named twice")
    missing = [c for c in template.required if c not in header]
    if missing:
        raise EntryFileError(f"{name} line 1: no column {missing[0]!r}, which is required")
    rows: list[Row] = []
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
        raise EntryFileError(f"{name} line {reader.line_num}: not CSV ({exc})") from None
    return rows


def _json_rows(text: str, name: str, template: Template) -> list[Row]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EntryFileError(f"{name} line {exc.lineno}: not JSON ({exc.msg})") from None
    items = data if isinstance(data, list) else [data]
    rows: list[Row] = []
    for number, item in enumerate(items, start=1):
        where = f"item {number}"
        if not isinstance(item, dict):
            raise EntryFileError(f"{name} {where}: not an object of the template's fields")
        _columns_known(list(item), name, f" {where}", template)
        rows.append((where, None, item))
    return rows


def field_help(model: type[BaseModel]) -> list[dict[str, str]]:
    """Each field of a template: its name, whether it is required, and what it means."""
    return [
        {
            "field": name,
            "required": "yes" if spec.is_required() else "no",
            "meaning": spec.description or "",
        }
        for name, spec in model.model_fields.items()
    ]
