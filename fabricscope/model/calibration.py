"""Calibrate collective cost (alpha, bus bandwidth) from nccl-tests output.

Pure functions of text in, data out: no file I/O, no printing (STYLE.md: the model is pure).

Units, everywhere in this module:

* sizes in bytes (``size_bytes``; the "size" column of nccl-tests, i.e. the whole array ``S``
  for all-gather, reduce-scatter and alltoall, not the per-rank part);
* times in microseconds (µs), as nccl-tests prints them;
* bandwidths in GB/s with 1 GB = 1e9 bytes, as nccl-tests computes them
  (``algbw = S / 1e9 / t_seconds``), so 1 GB/s = 1e3 bytes/µs.

Bus bandwidth follows nccl-tests' own definition (``doc/PERFORMANCE.md``, model-notes §2.12):

    "AllReduce : 2*(n-1)/n", "ReduceScatter : (n-1)/n", "AllGather : (n-1)/n",
    "Broadcast : 1", "Reduce : 1"; and "B = S/t * (2*(n-1)/n) = algbw * (2*(n-1)/n)".
    "The bus bandwidth should reflect the speed of the hardware bottleneck : NVLink, PCI, QPI,
    or network."

PERFORMANCE.md does not list AlltoAll or SendRecv; their factors, (n-1)/n and 1, are those of
nccl-tests' ``AlltoAllGetBw`` and ``SendRecvGetBw`` (src/alltoall.cu, src/sendrecv.cu).

The cost model fitted (model-notes §4.2, with all per-step latencies lumped into one ``alpha``)::

    time_us(S) = alpha_us + bus_factor * S / (busbw_gbytes_s * 1e3)

Which collective a text holds (``parse_nccl_tests``), in this order:

1. a ``<name>_perf`` binary named anywhere outside the table ("# Collective test starting:
   all_reduce_perf", a command line, "Collective test concluded: ...");
2. the ``collective=`` argument, for texts that name none (checked against 1 and 3 if both exist);
3. the table's shape: ``k = size / (count * bytes per element)`` is 1 for all-reduce, sendrecv,
   broadcast and reduce and n (the rank count) for all-gather, reduce-scatter and alltoall,
   because their "count" column is per rank. Then redop ``none`` with k = n is all-gather or
   alltoall (the two print identical tables: pass ``collective=``), redop ``none`` with k = 1
   and root >= 0 is broadcast, a reduction with k = n is reduce-scatter, a reduction with k = 1
   and root >= 0 is reduce, and a reduction with k = 1 and root -1 is all-reduce when
   busbw/algbw > 1, else sendrecv (nccl-tests prints sendrecv with redop ``sum``).

The rank count comes from the ``#  Rank  i Group g Pid p on <host> device d`` lines when there
are any (and with them the number of nodes, from the distinct hosts); else from ``k`` for
all-gather, reduce-scatter and alltoall (exact); else, for all-reduce, from the printed
busbw/algbw ratio ``2(n-1)/n`` at the row with the largest algbw, accepted only when the
rounding of the two printed numbers leaves a single possible integer n.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "AlphaBetaFit",
    "CalibrationError",
    "Collective",
    "NcclTestResult",
    "bus_factor",
    "effective_busbw",
    "fit_alpha_beta",
    "parse_nccl_tests",
]


class CalibrationError(ValueError):
    """nccl-tests output that cannot be read or fitted; the message names the line."""


class Collective(StrEnum):
    """The nccl-tests binaries this module reads (``<value>_perf``)."""

    ALL_REDUCE = "all_reduce"
    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALLTOALL = "alltoall"
    SENDRECV = "sendrecv"
    BROADCAST = "broadcast"
    REDUCE = "reduce"


# Bus factor = busbw / algbw: 2(n-1)/n, (n-1)/n or 1 (see the module docstring for the quotes).
_TWO_N_MINUS_ONE_OVER_N = frozenset({Collective.ALL_REDUCE})
_N_MINUS_ONE_OVER_N = frozenset(
    {Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALLTOALL}
)
# Collectives whose "size" column is count x n_ranks x bytes per element (count is per rank).
_PER_RANK_COUNT = _N_MINUS_ONE_OVER_N

# nccl-tests' type names (test_typenames in src/common.cu) and their sizes in bytes.
_BYTES_PER_ELEMENT = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
}

_SUPPORTED_BINARIES = {f"{c.value}_perf": c for c in Collective}
_BINARY = re.compile(
    r"\b(all_reduce|all_gather|reduce_scatter|alltoallv?|sendrecv|broadcast|reduce|gather"
    r"|scatter|hypercube)_perf\b"
)
# `srun --label` prefixes every line with the task id ("0: #  size ...").
_SRUN_LABEL = re.compile(r"^\s*\d+:\s")
_RANK = re.compile(r"^Rank\s+(\d{1,9})\s+Group\s+(\d{1,9})\s+Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+")
_PARAMS = re.compile(
    r"^nThread\s+\d+\s+nGpus\s+\d+\s+minBytes\s+(\d{1,18})\s+maxBytes\s+(\d{1,18})"
    r"(?:\s+step:\s+(\d{1,18})\((factor|bytes)\))?"
)
_AVG_BUSBW = re.compile(r"^Avg bus bandwidth\s*:\s*(\S+)")
_OUT_OF_BOUNDS = re.compile(r"^Out of bounds values\s*:")
_CONCLUDED = re.compile(r"^Collective test concluded\s*:")
# NCCL_DEBUG output that may be interleaved with the table ("host:pid:tid [0] NCCL INFO ...").
_NCCL_LOG = re.compile(r"\bNCCL (?:INFO|WARN|TRACE|ABORT)\b|^NCCL version\b")

_DESCRIPTIVE = ("size", "count", "type", "redop", "root")
_TIME_NAMES = frozenset({"time", "cputime"})
_WRONG_NAMES = frozenset({"#wrong", "wrong"})
_PLACEMENT_COLUMNS = ("time", "algbw", "busbw", "#wrong")
_ROW_COLUMNS = 13  # 5 descriptive + 4 out-of-place + 4 in-place

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Placement = Literal["out_of_place", "in_place"]


def bus_factor(collective: Collective, n_ranks: int | None) -> float:
    """busbw / algbw for a collective over ``n_ranks`` ranks (dimensionless).

    Raises CalibrationError when the factor depends on n and n is unknown.
    """
    collective = Collective(collective)
    if collective not in _TWO_N_MINUS_ONE_OVER_N | _N_MINUS_ONE_OVER_N:
        return 1.0
    if n_ranks is None or n_ranks < 1:
        raise CalibrationError(
            f"{collective.value}: the bus factor needs the rank count, which the text does "
            "not give (no '#  Rank' lines and no usable size/count or busbw/algbw ratio)"
        )
    factor = (n_ranks - 1) / n_ranks
    return 2.0 * factor if collective in _TWO_N_MINUS_ONE_OVER_N else factor


@dataclass(frozen=True, eq=False)
class NcclTestResult:
    """One nccl-tests result table and what its header says.

    Arrays are read-only, one entry per table row, in table order. Units: ``size_bytes`` bytes,
    ``count_elements`` elements (per rank for all-gather, reduce-scatter and alltoall),
    ``time_us_*`` µs, ``algbw_*`` and ``busbw_*`` GB/s (1e9 bytes/s). ``wrong_*`` is the #wrong
    column (elements that failed validation), NaN where nccl-tests printed N/A (validation off,
    or unsupported in place). ``avg_busbw`` (GB/s) is the "# Avg bus bandwidth" footer, the
    mean of every busbw printed (out-of-place and in-place), or None without a footer.
    ``n_ranks_source`` says where ``n_ranks`` came from: "rank_lines", "size_count_ratio" or
    "busbw_algbw_ratio". ``excerpt_evidence`` lists reasons to think rows were left out of the
    text (empty when none was found, which does not prove the table complete).
    """

    collective: Collective
    n_ranks: int | None
    n_ranks_source: str | None
    n_nodes: int | None
    hosts: tuple[str, ...]
    data_type: str
    redop: str
    root: int
    size_bytes: IntArray
    count_elements: IntArray
    time_us_out: FloatArray
    algbw_out: FloatArray
    busbw_out: FloatArray
    wrong_out: FloatArray
    time_us_in: FloatArray
    algbw_in: FloatArray
    busbw_in: FloatArray
    wrong_in: FloatArray
    avg_busbw: float | None
    header_min_bytes: int | None
    header_max_bytes: int | None
    table_first_line: int
    excerpt_evidence: tuple[str, ...]

    @property
    def n_rows(self) -> int:
        """Number of result rows."""
        return int(self.size_bytes.size)

    @property
    def bus_factor(self) -> float:
        """busbw / algbw for this collective and rank count (dimensionless)."""
        return bus_factor(self.collective, self.n_ranks)


@dataclass(frozen=True)
class AlphaBetaFit:
    """``time_us(S) = alpha_us + bus_factor * S / (busbw_gbytes_s * 1e3)``, S in bytes.

    ``alpha_us`` (µs) is the per-collective latency, None when the table has no latency-bound
    size to measure it from. ``busbw_gbytes_s`` (GB/s, 1e9 bytes/s) is the bus bandwidth
    plateau. ``*_size_range_bytes`` give the smallest and largest sizes (bytes) each part was
    fitted on, ``*_n_rows`` how many rows. ``intercept_us`` is the large-message line's own
    intercept (µs): it is not alpha, and a large value says the bandwidth was still ramping up.
    ``residual_rms_rel`` is the RMS relative error of the bandwidth line on its rows.
    """

    collective: Collective
    n_ranks: int | None
    bus_factor: float
    placement: Placement
    alpha_us: float | None
    alpha_size_range_bytes: tuple[int, int] | None
    alpha_n_rows: int
    busbw_gbytes_s: float
    busbw_size_range_bytes: tuple[int, int]
    busbw_n_rows: int
    intercept_us: float
    residual_rms_rel: float


# ---------------------------------------------------------------------------------------------
# Parsing


@dataclass(frozen=True)
class _Row:
    line: int
    size: int
    count: int
    data_type: str
    redop: str
    root: int
    out: tuple[float, float, float, float]  # time_us, algbw, busbw, wrong (NaN = N/A)
    inp: tuple[float, float, float, float]
    algbw_out_text: str
    busbw_out_text: str


@dataclass(frozen=True)
class _Rank:
    line: int
    rank: int
    group: int
    host: str


@dataclass
class _Scan:
    header_line: int | None = None
    has_timestamp: bool = False
    rows: list[_Row] = field(default_factory=list)
    ranks: list[_Rank] = field(default_factory=list)
    binaries: list[tuple[int, str]] = field(default_factory=list)  # (line, "<name>_perf")
    avg_busbw: tuple[int, float] | None = None
    params: tuple[int, int, int, int | None] | None = None  # line, min, max, step factor
    first_content: tuple[int, str] | None = None
    table_end_line: int | None = None
    n_lines: int = 0


def _content(raw: str) -> str:
    """A line without its srun label, leading '#' and surrounding blanks.

    Copies of nccl-tests output pasted into docs often lose the '#' (Markdown), so the same
    lines are recognised with or without it.
    """
    text = _SRUN_LABEL.sub("", raw, count=1).strip()
    if text.startswith("#"):
        text = text[1:].strip()
    return text


def _number(token: str, line: int, column: str) -> float:
    try:
        value = float(token)
    except ValueError:
        raise CalibrationError(
            f"line {line}: column '{column}' must be a number, got {token!r}"
        ) from None
    if not math.isfinite(value) or value < 0:
        raise CalibrationError(
            f"line {line}: column '{column}' must be a finite number >= 0, got {token!r}"
        )
    return value


# digits an integer column may have: a byte count or an element count that fits in int64
# (no nccl-tests run sends an exabyte); a longer one is damage, not a measurement
MAX_INTEGER_DIGITS = 18


def _integer(token: str, line: int, column: str, *, allow_negative: bool = False) -> int:
    if not re.fullmatch(r"-?\d+" if allow_negative else r"\d+", token):
        raise CalibrationError(f"line {line}: column '{column}' must be an integer, got {token!r}")
    if len(token.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise CalibrationError(
            f"line {line}: column '{column}' has {len(token.lstrip('-')):,} digits; no run "
            f"measures more than {MAX_INTEGER_DIGITS} (is the output damaged?)"
        )
    return int(token)


def _wrong(token: str, line: int, column: str) -> float:
    if token == "N/A":
        return math.nan
    value = _number(token, line, column)
    if value != int(value):
        raise CalibrationError(f"line {line}: column '{column}' must be a count, got {token!r}")
    return value


def _parse_header(tokens: list[str], line: int) -> bool:
    """Check a table header; return whether it has a trailing timestamp column."""
    layout = " ".join(_DESCRIPTIVE + _PLACEMENT_COLUMNS + _PLACEMENT_COLUMNS)
    has_timestamp = tokens[-1:] == ["timestamp"]
    body = tokens[:-1] if has_timestamp else tokens
    ok = (
        len(body) == _ROW_COLUMNS
        and tuple(body[:5]) == _DESCRIPTIVE
        and all(
            body[start] in _TIME_NAMES
            and body[start + 1 : start + 3] == ["algbw", "busbw"]
            and body[start + 3] in _WRONG_NAMES
            for start in (5, 9)
        )
    )
    if not ok:
        raise CalibrationError(
            f"line {line}: unsupported result table header {' '.join(tokens)!r}; "
            f"expected '{layout}'"
        )
    return has_timestamp


def _parse_row(tokens: list[str], line: int, has_timestamp: bool) -> _Row:
    expected = _ROW_COLUMNS + (2 if has_timestamp else 0)  # a timestamp prints as date + time
    if len(tokens) != expected:
        raise CalibrationError(f"line {line}: expected {expected} columns, got {len(tokens)}")
    size = _integer(tokens[0], line, "size")
    count = _integer(tokens[1], line, "count")
    root = _integer(tokens[4], line, "root", allow_negative=True)
    placements = []
    for start, name in ((5, "out-of-place"), (9, "in-place")):
        time_us, algbw, busbw = (
            _number(tokens[start + i], line, f"{column} ({name})")
            for i, column in enumerate(("time", "algbw", "busbw"))
        )
        placements.append((time_us, algbw, busbw, _wrong(tokens[start + 3], line, "#wrong")))
    return _Row(
        line=line,
        size=size,
        count=count,
        data_type=tokens[2],
        redop=tokens[3],
        root=root,
        out=placements[0],
        inp=placements[1],
        algbw_out_text=tokens[6],
        busbw_out_text=tokens[7],
    )


def _scan(text: str) -> _Scan:
    scan = _Scan()
    state = "preamble"  # -> "table" at the header -> "after" at the footer
    lines = text.splitlines()
    scan.n_lines = len(lines)
    for number, raw in enumerate(lines, start=1):
        content = _content(raw)
        if not content:
            continue
        if scan.first_content is None:
            scan.first_content = (number, raw.strip())
        tokens = content.split()
        if tokens[:2] == ["size", "count"]:
            if scan.header_line is not None:
                raise CalibrationError(
                    f"line {number}: a second result table (the first starts at line "
                    f"{scan.header_line}); give one nccl-tests run per text"
                )
            scan.has_timestamp = _parse_header(tokens, number)
            scan.header_line = number
            state = "table"
            continue
        if content.startswith("(B)") or "out-of-place" in content:
            continue  # the header's units line and the placement banner above it
        if state == "table":
            if tokens[0].isdigit():
                scan.rows.append(_parse_row(tokens, number, scan.has_timestamp))
                continue
            if _NCCL_LOG.search(content):
                continue
            if not (
                _OUT_OF_BOUNDS.match(content)
                or _AVG_BUSBW.match(content)
                or _CONCLUDED.match(content)
            ):
                raise CalibrationError(
                    f"line {number}: unexpected text inside the result table: {content[:60]!r}"
                )
            state = "after"
            scan.table_end_line = number
        elif tokens[0].isdigit() and len(tokens) >= _ROW_COLUMNS - 2:
            where = (
                f"after the table ended at line {scan.table_end_line}"
                if state == "after"
                else "before any table header (size count type redop root ...)"
            )
            raise CalibrationError(f"line {number}: a result row {where}")
        if match := _RANK.match(content):
            scan.ranks.append(
                _Rank(number, int(match.group(1)), int(match.group(2)), match.group(3))
            )
        elif match := _PARAMS.match(content):
            factor = int(match.group(3)) if match.group(4) == "factor" else None
            scan.params = (number, int(match.group(1)), int(match.group(2)), factor)
        elif match := _AVG_BUSBW.match(content):
            scan.avg_busbw = (number, _number(match.group(1), number, "Avg bus bandwidth"))
        if match := _BINARY.search(content):
            scan.binaries.append((number, match.group(0)))
    return scan


def _no_table_error(scan: _Scan) -> CalibrationError:
    if scan.first_content is None:
        return CalibrationError("line 1: the text is empty; expected nccl-tests output")
    number, first = scan.first_content
    if first.startswith("<"):
        return CalibrationError(
            f"line {number}: the text looks like an HTML/XML page ({first[:40]!r}), "
            "not nccl-tests output; extract the benchmark's text first"
        )
    return CalibrationError(
        f"line {scan.n_lines}: no nccl-tests result table found (read {scan.n_lines} lines, "
        "none is a header 'size count type redop root time algbw busbw #wrong ...')"
    )


def _half_unit(token: str) -> float:
    """Half the last printed digit's value: the rounding error of a printed number."""
    mantissa = token.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    scale = 10.0 ** int(token.lower().split("e")[1]) if "e" in token.lower() else 1.0
    return 0.5 * 10.0**-decimals * scale


def _ratio_bounds(rows: list[_Row]) -> tuple[float, float] | None:
    """Bounds on busbw/algbw from the out-of-place row with the largest algbw."""
    best = max(rows, key=lambda row: row.out[1])
    algbw, busbw = best.out[1], best.out[2]
    d_alg, d_bus = _half_unit(best.algbw_out_text), _half_unit(best.busbw_out_text)
    if algbw - d_alg <= 0:
        return None
    return (busbw - d_bus) / (algbw + d_alg), (busbw + d_bus) / (algbw - d_alg)


def _ranks_from_all_reduce_ratio(bounds: tuple[float, float] | None) -> int | None:
    """n from busbw/algbw = 2(n-1)/n, if the printed rounding leaves one integer."""
    if bounds is None:
        return None
    low, high = bounds
    if high >= 2.0:
        return None
    n_low, n_high = 2.0 / (2.0 - low), 2.0 / (2.0 - high)
    candidates = range(max(2, math.ceil(n_low)), math.floor(n_high) + 1)
    return candidates[0] if len(candidates) == 1 else None


def _size_count_ratio(rows: list[_Row]) -> int | None:
    """size / (count x bytes per element), the same for every row (rows of size 0 skipped)."""
    measured = [row for row in rows if row.size > 0 and row.count > 0]
    if not measured:
        return None
    word = _BYTES_PER_ELEMENT.get(measured[0].data_type)
    if word is None:
        raise CalibrationError(
            f"line {measured[0].line}: unknown data type {measured[0].data_type!r}; "
            f"expected one of {', '.join(_BYTES_PER_ELEMENT)}"
        )
    ratio = measured[0].size / (measured[0].count * word)
    for row in measured:
        if row.size / (row.count * word) != ratio or ratio != int(ratio):
            raise CalibrationError(
                f"line {row.line}: size / (count x {word} B) is not the same whole number "
                f"as on line {measured[0].line}; the table mixes collectives or was edited"
            )
    return int(ratio)


def _shape_candidates(
    rows: list[_Row], k: int | None, ratio: tuple[float, float] | None, n_from_ranks: int | None
) -> set[Collective]:
    """Collectives whose nccl-tests table has this shape (see the module docstring)."""
    first = rows[0]
    reduction = first.redop != "none"
    if k is None:
        return set()
    if reduction and k == 1 and first.root < 0:
        if ratio is not None and ratio[0] > 1.0:
            return {Collective.ALL_REDUCE}
        if n_from_ranks is not None and n_from_ranks > 2:
            return {Collective.SENDRECV}  # busbw = algbw rules out all-reduce over > 2 ranks
        return {Collective.ALL_REDUCE, Collective.SENDRECV}
    if reduction and k == 1:
        return {Collective.REDUCE}
    if reduction and first.root < 0:
        return {Collective.REDUCE_SCATTER}
    if not reduction and k == 1 and first.root >= 0:
        return {Collective.BROADCAST}
    if not reduction and k > 1 and first.root < 0:
        return {Collective.ALL_GATHER, Collective.ALLTOALL}
    return set()


def _named_collective(binaries: list[tuple[int, str]]) -> tuple[int, Collective] | None:
    names = {name for _, name in binaries}
    if not names:
        return None
    if len(names) > 1:
        where = ", ".join(f"line {line}: {name}" for line, name in binaries)
        raise CalibrationError(f"the text names more than one nccl-tests binary ({where})")
    line, name = binaries[0]
    if name not in _SUPPORTED_BINARIES:
        raise CalibrationError(
            f"line {line}: {name} is not supported; expected one of "
            f"{', '.join(sorted(_SUPPORTED_BINARIES))}"
        )
    return line, _SUPPORTED_BINARIES[name]


def _resolve_collective(
    binaries: list[tuple[int, str]],
    hint: Collective | None,
    candidates: set[Collective],
    header_line: int,
    shape: str,
) -> Collective:
    named = _named_collective(binaries)
    if named is not None and hint is not None and named[1] != hint:
        raise CalibrationError(
            f"line {named[0]}: the text names {named[1].value}_perf but collective="
            f"{hint.value!r} was given"
        )
    chosen = named[1] if named is not None else hint
    fits = " or ".join(sorted(c.value for c in candidates))
    if chosen is not None:
        if candidates and chosen not in candidates:
            raise CalibrationError(
                f"line {header_line}: the table {shape} fits {fits}, not {chosen.value}"
            )
        return chosen
    if len(candidates) == 1:
        return next(iter(candidates))
    what = f"fits {fits}" if candidates else "fits no supported collective"
    raise CalibrationError(
        f"line {header_line}: the text names no *_perf binary and the table {shape} {what}; "
        "pass collective= to say which"
    )


def _rank_layout(ranks: list[_Rank]) -> tuple[int, int | None, tuple[str, ...]] | None:
    """(ranks, nodes, hosts) of rank 0's group, from the '#  Rank' lines."""
    if not ranks:
        return None
    group = min(ranks, key=lambda r: r.rank).group
    members = {r.rank: r.host for r in ranks if r.group == group}
    hosts = tuple(dict.fromkeys(members[rank] for rank in sorted(members)))
    # a list with gaps (an excerpt of the rank lines) gives the rank count, not the nodes
    complete = len(members) == max(members) + 1 - min(members)
    return len(members), (len(hosts) if complete else None), hosts


def _check_one_sweep(rows: list[_Row]) -> None:
    first = rows[0]
    for previous, row in itertools.pairwise(rows):
        if (row.data_type, row.redop, row.root) != (first.data_type, first.redop, first.root):
            raise CalibrationError(
                f"line {row.line}: type/redop/root {row.data_type}/{row.redop}/{row.root} "
                f"differ from line {first.line} ({first.data_type}/{first.redop}/{first.root}); "
                "give one sweep (one -d and -o value) per text"
            )
        if row.size < previous.size:
            raise CalibrationError(
                f"line {row.line}: size {row.size} B after {previous.size} B on line "
                f"{previous.line}; the table holds more than one sweep"
            )


def _excerpt_evidence(scan: _Scan, rows: list[_Row]) -> tuple[str, ...]:
    evidence = []
    if scan.avg_busbw is not None:
        line, footer = scan.avg_busbw
        printed = [row.out[2] for row in rows] + [row.inp[2] for row in rows]
        mean = float(np.mean(printed))
        # nccl-tests averages unrounded values; printed busbw carries up to 0.05 of rounding
        if abs(mean - footer) > 0.05 + 1e-5 * abs(footer):
            evidence.append(
                f"line {line}: footer Avg bus bandwidth {footer:g} GB/s but the rows' mean "
                f"busbw is {mean:.3f} GB/s (rows missing)"
            )
    if scan.params is not None:
        line, min_bytes, max_bytes, factor = scan.params
        if rows[0].size > min_bytes:
            evidence.append(
                f"line {line}: header minBytes {min_bytes} but the table starts at {rows[0].size} B"
            )
        if factor is not None and rows[-1].size * factor <= max_bytes:
            evidence.append(
                f"line {line}: header maxBytes {max_bytes} but the table ends at {rows[-1].size} B"
            )
    return tuple(evidence)


def _frozen(values: list[float] | list[int], dtype: type) -> NDArray:
    array = np.asarray(values, dtype=dtype)
    array.setflags(write=False)
    return array


def parse_nccl_tests(text: str, *, collective: Collective | str | None = None) -> NcclTestResult:
    """Read one nccl-tests run (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
    alltoall_perf, sendrecv_perf, broadcast_perf or reduce_perf) from its printed output.

    Accepts the output as nccl-tests prints it and as it is usually copied: with or without the
    leading '#' on header lines, with `srun --label` prefixes ("0: "), with NCCL_DEBUG lines
    around or inside the table, with #wrong printed as N/A. ``collective`` names the binary for
    texts that do not (see the module docstring for how the table's shape is used).

    Raises CalibrationError naming the line when the text is empty, is HTML, has no result
    table, has a row with the wrong number of columns or a non-number, or mixes several sweeps.
    """
    if collective is not None and collective not in {c.value for c in Collective}:
        raise CalibrationError(
            f"unknown collective {collective!r}; one of {', '.join(c.value for c in Collective)}"
        )
    hint = Collective(collective) if collective is not None else None
    scan = _scan(text)
    rows = scan.rows
    if scan.header_line is None:
        raise _no_table_error(scan)
    if not rows:
        raise CalibrationError(
            f"line {scan.header_line}: the result table has no rows (is the output truncated?)"
        )
    _check_one_sweep(rows)

    layout = _rank_layout(scan.ranks)
    n_from_ranks = layout[0] if layout else None
    k = _size_count_ratio(rows)
    ratio = _ratio_bounds(rows)
    candidates = _shape_candidates(rows, k, ratio, n_from_ranks)
    shape = f"(redop {rows[0].redop}, root {rows[0].root}, size/count = {k} x element size)"
    chosen = _resolve_collective(scan.binaries, hint, candidates, scan.header_line, shape)

    n_ranks: int | None = None
    source: str | None = None
    if layout is not None:
        n_ranks, source = layout[0], "rank_lines"
    if chosen in _PER_RANK_COUNT and k is not None:
        if n_ranks is not None and n_ranks != k:
            raise CalibrationError(
                f"line {scan.header_line}: size / count implies {k} ranks but the "
                f"'#  Rank' lines list {n_ranks}"
            )
        n_ranks, source = k, source or "size_count_ratio"
    if chosen in _TWO_N_MINUS_ONE_OVER_N:
        from_ratio = _ranks_from_all_reduce_ratio(ratio)
        if from_ratio is not None and n_ranks is not None and from_ratio != n_ranks:
            raise CalibrationError(
                f"line {scan.header_line}: busbw/algbw implies {from_ratio} ranks but the "
                f"'#  Rank' lines list {n_ranks}"
            )
        if n_ranks is None and from_ratio is not None:
            n_ranks, source = from_ratio, "busbw_algbw_ratio"

    first = rows[0]
    return NcclTestResult(
        collective=chosen,
        n_ranks=n_ranks,
        n_ranks_source=source,
        n_nodes=layout[1] if layout else None,
        hosts=layout[2] if layout else (),
        data_type=first.data_type,
        redop=first.redop,
        root=first.root,
        size_bytes=_frozen([row.size for row in rows], np.int64),
        count_elements=_frozen([row.count for row in rows], np.int64),
        time_us_out=_frozen([row.out[0] for row in rows], np.float64),
        algbw_out=_frozen([row.out[1] for row in rows], np.float64),
        busbw_out=_frozen([row.out[2] for row in rows], np.float64),
        wrong_out=_frozen([row.out[3] for row in rows], np.float64),
        time_us_in=_frozen([row.inp[0] for row in rows], np.float64),
        algbw_in=_frozen([row.inp[1] for row in rows], np.float64),
        busbw_in=_frozen([row.inp[2] for row in rows], np.float64),
        wrong_in=_frozen([row.inp[3] for row in rows], np.float64),
        avg_busbw=scan.avg_busbw[1] if scan.avg_busbw else None,
        header_min_bytes=scan.params[1] if scan.params else None,
        header_max_bytes=scan.params[2] if scan.params else None,
        table_first_line=first.line,
        excerpt_evidence=_excerpt_evidence(scan, rows),
    )


# ---------------------------------------------------------------------------------------------
# Fitting

# Bandwidth rows: the plateau, i.e. the rows whose printed busbw is at least 90 % of the
# table's highest (whatever sizes the table spans); if they hold fewer than 2 distinct sizes,
# the rows of the 2 largest sizes.
_PLATEAU_SHARE_OF_PEAK = 0.9
_PLATEAU_MIN_ROWS = 2
# Latency rows: the smallest sizes whose bandwidth term at the fitted plateau is under 5 % of
# the measured time, at most 8 of them (8 B - 1 KiB in the usual -b 8 -f 2 sweep). Larger
# sizes switch NCCL protocols (LL -> LL128 -> Simple) and would bias a median upwards.
_LATENCY_MAX_SHARE = 0.05
_LATENCY_MAX_ROWS = 8
_BYTES_PER_US_PER_GBYTES_S = 1e3  # 1 GB/s = 1e9 B / 1e6 µs


def fit_alpha_beta(result: NcclTestResult, use: Placement = "out_of_place") -> AlphaBetaFit:
    """Fit ``time_us = alpha_us + bus_factor * S / (busbw_gbytes_s * 1e3)`` to one placement.

    Bandwidth: an ordinary least-squares line of time (µs) against ``bus_factor * S`` (bytes)
    over the plateau rows, those whose printed busbw is at least 90 % of the table's highest
    (or the rows of the 2 largest sizes if fewer); busbw is 1 / slope. Unweighted, the largest sizes
    dominate, so busbw is the marginal bandwidth of the biggest messages (a few % above the
    last row's busbw when the curve is still climbing). The line's own intercept is kept as
    ``intercept_us``, not used as alpha: it absorbs the protocol ramp.

    Latency: alpha is the median of ``time - bus_factor * S / busbw`` over the smallest sizes
    whose bandwidth term is under 5 % of their time (at most 8 rows); the median ignores a
    single slow row. None when no row is latency-bound (a table that starts at large sizes).
    Rows of size 0 (all-gather of fewer elements than ranks) carry no data and are skipped.
    """
    if use not in ("out_of_place", "in_place"):
        raise ValueError(f"use must be 'out_of_place' or 'in_place', got {use!r}")
    factor = result.bus_factor
    times, busbw = (
        (result.time_us_out, result.busbw_out)
        if use == "out_of_place"
        else (result.time_us_in, result.busbw_in)
    )
    keep = result.size_bytes > 0
    order = np.argsort(result.size_bytes[keep], kind="stable")
    sizes, times, busbw = (column[keep][order] for column in (result.size_bytes, times, busbw))
    if np.unique(sizes).size < 2:
        raise CalibrationError(
            f"{result.collective.value}: need at least 2 distinct sizes > 0 to fit a bandwidth, "
            f"the table (from line {result.table_first_line}) has {np.unique(sizes).size}"
        )
    bus_bytes = factor * sizes.astype(np.float64)

    plateau = busbw >= _PLATEAU_SHARE_OF_PEAK * busbw.max()
    if np.unique(sizes[plateau]).size < _PLATEAU_MIN_ROWS:
        plateau = sizes >= np.unique(sizes)[-_PLATEAU_MIN_ROWS]
    x, t = bus_bytes[plateau], times[plateau]
    slope, intercept = np.polyfit(x, t, deg=1)
    if not slope > 0:
        raise CalibrationError(
            f"{result.collective.value}: time does not grow with size over "
            f"{int(sizes[plateau][0])}-{int(sizes[plateau][-1])} B (table from line "
            f"{result.table_first_line}); cannot fit a bandwidth"
        )
    bytes_per_us = 1.0 / slope
    residual = float(np.sqrt(np.mean(((intercept + slope * x - t) / t) ** 2)))

    bandwidth_term = bus_bytes / bytes_per_us
    latency_bound = bandwidth_term < _LATENCY_MAX_SHARE * times
    # the leading run of latency-bound rows, smallest sizes first
    n_latency = int(np.argmin(latency_bound)) if not latency_bound.all() else latency_bound.size
    n_latency = min(n_latency, _LATENCY_MAX_ROWS)
    alpha: float | None = None
    alpha_range: tuple[int, int] | None = None
    if n_latency > 0:
        alpha = float(np.median(times[:n_latency] - bandwidth_term[:n_latency]))
        alpha_range = (int(sizes[0]), int(sizes[n_latency - 1]))

    return AlphaBetaFit(
        collective=result.collective,
        n_ranks=result.n_ranks,
        bus_factor=factor,
        placement=use,
        alpha_us=alpha,
        alpha_size_range_bytes=alpha_range,
        alpha_n_rows=n_latency,
        busbw_gbytes_s=bytes_per_us / _BYTES_PER_US_PER_GBYTES_S,
        busbw_size_range_bytes=(int(sizes[plateau][0]), int(sizes[plateau][-1])),
        busbw_n_rows=int(plateau.sum()),
        intercept_us=float(intercept),
        residual_rms_rel=residual,
    )


def effective_busbw(fit: AlphaBetaFit, size_bytes: ArrayLike) -> FloatArray | float:
    """Bus bandwidth (GB/s) the fit implies for messages of ``size_bytes`` bytes.

    ``bus_factor * S / time_us(S)``, i.e. what nccl-tests would print as busbw at that size;
    0 for S = 0. Returns a float for a scalar size, else an array of the same shape.
    """
    if fit.alpha_us is None:
        raise CalibrationError(
            f"{fit.collective.value} fit has no alpha_us (the table has no latency-bound "
            "sizes); set one, e.g. dataclasses.replace(fit, alpha_us=<prior µs>)"
        )
    sizes = np.asarray(size_bytes, dtype=np.float64)
    if np.any(sizes < 0) or not np.all(np.isfinite(sizes)):
        raise ValueError("size_bytes must be finite and >= 0")
    bus_bytes = fit.bus_factor * sizes
    bytes_per_us = fit.busbw_gbytes_s * _BYTES_PER_US_PER_GBYTES_S
    time_us = fit.alpha_us + bus_bytes / bytes_per_us
    busbw = np.where(time_us > 0, bus_bytes / np.where(time_us > 0, time_us, 1.0), 0.0)
    busbw = busbw / _BYTES_PER_US_PER_GBYTES_S
    return float(busbw) if busbw.ndim == 0 else busbw
