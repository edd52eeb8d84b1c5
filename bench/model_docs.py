"""Regenerate the validation sections of docs/MODEL.md: the model beside the naive baseline and
llm-analysis on the published runs (in-sample), and the leave-one-family-out figures (one fit
per family: minutes). ``python -m bench.model_docs``; a test checks the file holds what this
generates, the held-out block by the inputs it states (tests/pipeline/test_validation.py)."""

from __future__ import annotations

from collections.abc import Sequence

from bench import llm_analysis_baseline
from pipeline.validation import (
    DOCS_FILE,
    HELD_OUT_END,
    HELD_OUT_START,
    CalibrationCase,
    SkippedRow,
    docs_section,
    held_out_section,
    leave_one_family_out,
    map_rows,
    replace_block,
    replace_docs_section,
    score,
)


def section(cases: Sequence[CalibrationCase], skipped: Sequence[SkippedRow]) -> str:
    """The section, with llm-analysis as the third estimator (it is a test dependency)."""
    if not llm_analysis_baseline.AVAILABLE:
        raise SystemExit(llm_analysis_baseline.MISSING)
    results = llm_analysis_baseline.llm_analysis_results(cases, score(cases))
    extra = [(llm_analysis_baseline.row_name(), [r.error_percent for r in results])]
    return docs_section(cases, skipped, extra, llm_analysis_baseline.notes(results))


def main() -> None:
    cases, skipped = map_rows()
    replace_docs_section(DOCS_FILE, section(cases, skipped))
    held_out = held_out_section(cases, leave_one_family_out(cases))
    replace_block(DOCS_FILE, HELD_OUT_START, HELD_OUT_END, held_out)
    print(f"wrote the validation sections of {DOCS_FILE.name}")


if __name__ == "__main__":
    main()
