"""The SQL console's worker process: ``python -m fabricscope.warehouse.query_worker``
(fabricscope/warehouse/query.py)."""

from __future__ import annotations

import sys

from fabricscope.warehouse.query import worker

if __name__ == "__main__":
    sys.exit(worker())
