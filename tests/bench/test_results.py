"""bench/results.md and docs/MODEL.md print the same accuracy figures, from one run."""

from __future__ import annotations

from pathlib import Path

from bench import bench_model, model_docs
from fabricscope.accuracy.validation import BLIND_END, BLIND_START, HELD_OUT_START

STALE = "bench/results.md and docs/MODEL.md disagree: run python -m bench.model_docs"


def _blocks(text: str) -> dict[str, str]:
    """Each generated block of ``text`` (markers included), by its start marker."""
    found = {}
    for start, end in model_docs.MARKERS:
        if start in text and end in text:
            found[start] = text[text.index(start) : text.index(end) + len(end)]
    return found


def _figures(block: str) -> dict[tuple[str, str], str]:
    """Every cell of the block's tables, by (row label, column header); a label that repeats
    (one per table) is numbered by its table."""
    figures: dict[tuple[str, str], str] = {}
    header: list[str] = []
    table = 0
    for line in block.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if not header:
            header, table = cells, table + 1
        elif not set(line) <= set("|-: "):
            for column, value in zip(header[1:], cells[1:], strict=False):
                figures[(f"{table}: {cells[0]}", column)] = value
    return figures


def disagreements(results: str, docs: str) -> list[str]:
    """Each figure of the two texts' generated blocks that differs, or a block one lacks."""
    ours, theirs = _blocks(results), _blocks(docs)
    problems = []
    for start, _ in model_docs.MARKERS:
        if start not in ours or start not in theirs:
            where = "bench/results.md" if start not in ours else "docs/MODEL.md"
            problems.append(f"{where} lacks the block {start}")
            continue
        mine, other = _figures(ours[start]), _figures(theirs[start])
        for key in sorted(mine.keys() | other.keys()):
            if mine.get(key) != other.get(key):
                row, column = key
                problems.append(
                    f"{start.split(':')[0].removeprefix('<!-- ')} row {row!r}, {column!r}: "
                    f"results.md {mine.get(key)}, MODEL.md {other.get(key)}"
                )
    return problems


def test_results_print_the_accuracy_figures_of_model_md():
    results = model_docs.RESULTS_FILE.read_text(encoding="utf-8")
    docs = model_docs.DOCS_FILE.read_text(encoding="utf-8")
    problems = disagreements(results, docs)
    assert not problems, STALE + "\n" + "\n".join(problems)
    # and word for word: the same generated blocks
    assert _blocks(results) == _blocks(docs), STALE


def test_a_figure_that_differs_is_named():
    docs = model_docs.DOCS_FILE.read_text(encoding="utf-8")
    held_out = _blocks(docs)[HELD_OUT_START]
    row = next(line for line in held_out.splitlines() if line.startswith("| all, each family"))
    median = row.split(" | ")[2]
    other = docs.replace(row, row.replace(f"| {median} |", "| 10.6 |", 1))
    assert disagreements(other, docs) == [
        f"held-out row '1: all, each family held out', 'median error %': results.md 10.6, "
        f"MODEL.md {median}"
    ]
    without_blind = docs[: docs.index(BLIND_START)] + docs[docs.index(BLIND_END) + len(BLIND_END) :]
    assert disagreements(without_blind, docs) == [f"bench/results.md lacks the block {BLIND_START}"]
    assert len(disagreements("", docs)) == len(model_docs.MARKERS)


def test_the_bench_prints_the_blocks_it_writes_into_model_md(monkeypatch, tmp_path):
    # generating the blocks takes minutes (tests/accuracy checks each against the code); here
    # they are today's with one figure changed, to see the bench print what it writes
    docs = tmp_path / "MODEL.md"
    text = model_docs.DOCS_FILE.read_text(encoding="utf-8")
    docs.write_text(text, encoding="utf-8")
    monkeypatch.setattr(model_docs, "DOCS_FILE", docs)
    today = _blocks(text)
    moved = today[HELD_OUT_START].replace(
        "| all, each family held out | ", "| all, each family held out | 1", 1
    )
    generated = [
        model_docs.Block(start, end, moved if start == HELD_OUT_START else today[start])
        for start, end in model_docs.MARKERS
    ]
    asked: list[Path | None] = []

    def blocks(_report: object, bands_file: Path | None = None) -> list[model_docs.Block]:
        asked.append(bands_file)  # the stand-in writes no bands
        return generated

    monkeypatch.setattr(model_docs, "blocks", blocks)
    printed = _blocks("\n".join(bench_model._accuracy(lambda _message: None)))
    assert asked == [model_docs.BANDS_FILE], "the bench writes the error bands from its fits"
    written = _blocks(docs.read_text(encoding="utf-8"))
    assert printed == written == {block.start: block.text for block in generated}
    assert written[HELD_OUT_START] != today[HELD_OUT_START]
