"""Building and refreshing the warehouse (scraper runs arrive with the scrapers)."""

from __future__ import annotations

from pathlib import Path

from warehouse.db import PublishResult
from warehouse.load import init_warehouse


def ensure_warehouse(warehouse: Path) -> PublishResult:
    """Create or migrate the warehouse and load the bundled reference data.

    Idempotent: publishes a new snapshot only when the schema or the reference
    CSVs changed.
    """
    return init_warehouse(warehouse)
