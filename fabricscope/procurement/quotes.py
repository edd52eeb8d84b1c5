"""Quotes the buyer received: entered one at a time or imported from a CSV or JSON file,
checked against the ``Quote`` contract (fabricscope/warehouse/models.py), stored append-only
and ranked beside the list offers (``quote_offers``).

A file is read whole first: a row that breaks the contract is refused with its line (a JSON
item's number) and field, and every other row is stored. A file that is not a quotes file at
all (an unknown column, a missing required one, not CSV or JSON) is refused in one line and
nothing of it is stored. docs/QUOTES.md documents the template.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from fabricscope.model.hardware import HardwareError
from fabricscope.procurement import entries
from fabricscope.procurement.entries import (
    EntryFileError,
    RowError,
    Template,
    blank_to_none,
    validation_errors,
)
from fabricscope.rank import catalog
from fabricscope.warehouse import reads
from fabricscope.warehouse.db import read_frame
from fabricscope.warehouse.load import QUOTES, EntriesStored, publish_entries
from fabricscope.warehouse.models import QUOTE_FIELDS, Quote

QUOTE_TEMPLATE = Template.of(Quote, "fabricscope quote template")
# the fields a row must give (the others may be left empty)
REQUIRED = QUOTE_TEMPLATE.required
QuoteFileError = EntryFileError  # a file that is no quotes file: nothing of it is stored


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
    return entries.field_help(Quote)


def check(raw: Mapping[str, Any], where: str) -> Quote | list[RowError]:
    """One row as a Quote, or what is wrong with it (field by field). Empty cells are unknown;
    the GPU is resolved to its canonical id (an alias is accepted)."""
    values = blank_to_none(raw)
    gpu = values.get("gpu_model")
    if isinstance(gpu, str):
        try:
            values["gpu_model"] = catalog.resolve_gpu(gpu.strip())
        except HardwareError as exc:
            return [RowError(where, "gpu_model", str(exc))]
    try:
        return Quote.model_validate(values)
    except ValidationError as exc:
        return validation_errors(exc, where)


def parse(data: bytes, name: str) -> tuple[list[Entered], list[RowError]]:
    """The quotes in a CSV or JSON file and the rows refused; raises QuoteFileError when the
    file is no quotes file at all (fabricscope/procurement/entries.py)."""
    taken, refused = entries.parse(data, name, QUOTE_TEMPLATE, check)
    return [Entered(quote, where, line) for quote, where, line in taken], refused


def content_sha256(quote: Quote) -> str:
    """What identifies a quote: its fields (not who entered it or when)."""
    fields = quote.model_dump(mode="json", exclude={"entered_by", "notes"})
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def quote_id(quote: Quote) -> str:
    """A quote's id: the first ten hex digits of its content's SHA-256."""
    return f"q-{content_sha256(quote)[:10]}"


def record(entered: Entered, entered_at: datetime, file_name: str | None) -> dict[str, Any]:
    """The row stored for one quote (dates as ISO text, which the table's DATE columns read)."""
    quote = entered.quote
    sha = content_sha256(quote)
    return {
        **quote.model_dump(mode="json"),
        "quote_id": f"q-{sha[:10]}",
        "price_usd_per_gpu_hour": quote.price_usd_per_gpu_hour,
        "entered_at": entered_at,
        "file_name": file_name,
        "line": entered.line,
        "content_sha256": sha,
    }


def store(
    warehouse: Path,
    entered: Sequence[Entered],
    entered_at: datetime,
    file_name: str | None = None,
    lock_wait_s: float = 0.0,
) -> EntriesStored:
    """Store the checked quotes as one snapshot (a quote already stored is stored once)."""
    rows = [record(e, entered_at, file_name) for e in entered]
    return publish_entries(warehouse, QUOTES, rows, lock_wait_s)


def stored_quotes(warehouse: Path, today: date) -> pd.DataFrame:
    """Every stored quote, oldest first, with ``expired`` (its last valid day before
    ``today``); an empty frame for a warehouse without quotes yet."""
    _, frame = read_frame(warehouse, reads.sql("quotes"))
    valid = pd.to_datetime(frame["valid_until"]).dt.date
    frame["expired"] = [bool(v is not None and not pd.isna(v) and v < today) for v in valid]
    return frame
