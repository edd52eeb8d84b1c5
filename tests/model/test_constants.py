"""Every model constant says what it is (fitted, measured, prior or policy) and where it comes
from, and the fit fits exactly the ones marked fitted."""

from __future__ import annotations

from dataclasses import fields

from fabricscope.model.scaling import (
    CONSTANT_KINDS,
    ModelConstants,
    constant_kinds,
    fitted_constants,
)
from tests.helpers import ROOT


def test_every_constant_has_a_kind_and_a_source():
    kinds = constant_kinds()
    assert set(kinds) == {f.name for f in fields(ModelConstants)}
    for name, (kind, source) in kinds.items():
        assert kind in CONSTANT_KINDS, name
        assert len(source) > 8, f"{name}: say where it comes from"
    assert {kind for kind, _ in kinds.values()} == set(CONSTANT_KINDS)


def test_the_fit_fits_exactly_the_constants_marked_fitted(published_cases):
    from fabricscope.accuracy.validation import fit_constants

    _, report = fit_constants(published_cases, grid_points=dict.fromkeys(fitted_constants(), 1))
    assert list(report.fitted) == fitted_constants()


def test_docs_model_names_every_constant():
    text = (ROOT / "docs" / "MODEL.md").read_text()
    missing = [name for name in constant_kinds() if f"`{name}`" not in text]
    assert missing == []
