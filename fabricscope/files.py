"""Reading the JSON files people hand the CLI (workloads, hardware): bounded and strict."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

# a workload or a few hardware profiles, not a data set: anything larger is refused unread
MAX_INPUT_BYTES = 1_000_000


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


# digits a whole number in such a file may have: counts and token totals, not a 5,000-digit
# string (Python refuses past 4,300 with a message about sys.set_int_max_str_digits)
MAX_INTEGER_DIGITS = 30


def _whole(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise ValueError(
            f"a whole number with {digits:,} digits is too large (at most {MAX_INTEGER_DIGITS})"
        )
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def read_json_input(path: Path, error: type[Exception], max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON in ``path``, or ``error`` with one line: too large, not UTF-8, not JSON,
    nested too deeply, or a number that is not finite (NaN, Infinity, 1e309)."""
    if not path.is_file():
        raise error(f"no such file: {path}")
    size = path.stat().st_size
    if size > max_bytes:
        raise error(f"{path}: {size:,} bytes is more than the {max_bytes:,} such a file may hold")
    try:
        text = path.read_bytes().decode("utf-8-sig")  # a byte-order mark is no content
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}): is it the right file?") from None
    try:
        return json.loads(text, parse_float=_finite, parse_int=_whole, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except ValueError as exc:
        raise error(f"{path}: {exc}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a workload or hardware file") from None
