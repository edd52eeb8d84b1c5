from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.load import init_warehouse


@pytest.fixture
def warehouse_path(tmp_path: Path) -> Path:
    """A real, freshly initialised warehouse file (schema and reference data)."""
    path = tmp_path / "data" / "warehouse.duckdb"
    init_warehouse(path)
    return path
