"""Frames to plain rows, fast: the pipeline's per-row logic reads dicts of Python values."""

from __future__ import annotations

from typing import Any

import pandas as pd


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as dicts of Python values, NULL (None, NaN, NaT, NA) as None.

    Column by column: far faster on large frames than ``to_dict('records')``, which boxes
    every cell on its own.
    """
    boxed = frame.astype(object).where(frame.notna(), None)
    columns = list(boxed.columns)
    values = [boxed[name].tolist() for name in columns]
    return [dict(zip(columns, row, strict=True)) for row in zip(*values, strict=True)]
