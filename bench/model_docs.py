"""Regenerate the validation section of docs/MODEL.md: the model beside the naive baseline and
llm-analysis on the published runs. ``python -m bench.model_docs``; a test checks the file
holds what this generates (tests/pipeline/test_validation.py)."""

from __future__ import annotations

from collections.abc import Sequence

from bench import llm_analysis_baseline
from pipeline.validation import (
    DOCS_FILE,
    CalibrationCase,
    SkippedRow,
    docs_section,
    map_rows,
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
    print(f"wrote the validation section of {DOCS_FILE.name}")


if __name__ == "__main__":
    main()
