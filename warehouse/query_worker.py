"""The SQL console's worker process: ``python -m warehouse.query_worker`` (warehouse/query.py)."""

from __future__ import annotations

import sys

from warehouse.query import worker

if __name__ == "__main__":
    sys.exit(worker())
