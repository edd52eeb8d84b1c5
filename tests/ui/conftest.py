from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import AS_OF


@pytest.fixture
def use_warehouse(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[Path], Path]:
    """Point the app at ``path``; logs and raw feeds of anything it writes stay in tmp; prices
    are aged at ``AS_OF``, not the clock."""

    def use(path: Path) -> Path:
        monkeypatch.setenv("FABRICSCOPE_WAREHOUSE", str(path))
        monkeypatch.setenv("FABRICSCOPE_DATA_DIR", str(tmp_path / "data-dir"))
        monkeypatch.setenv("FABRICSCOPE_AS_OF", AS_OF.isoformat())
        return path

    return use
