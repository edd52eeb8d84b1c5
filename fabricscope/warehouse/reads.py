"""The warehouse's named reads: every query the code runs on the warehouse is a file in
``sql/queries/`` (its first line says who reads it), asked for by name. Only the SQL console
(``query.py``) runs SQL that is not here: people's own. ``tests/warehouse/test_reads.py`` runs
every one on a warehouse built from the recordings, and ``tests/test_layout.py`` finds no SQL
string in the package outside this room."""

from __future__ import annotations

from functools import cache

from fabricscope.warehouse.db import SQL_DIR, WarehouseError

QUERIES_DIR = SQL_DIR / "queries"


@cache
def sql(name: str) -> str:
    """The text of the named query ``sql/queries/<name>.sql``."""
    path = QUERIES_DIR / f"{name}.sql"
    if not path.is_file():
        raise WarehouseError(f"no named query {name!r} (the files in {QUERIES_DIR.name}/)")
    return path.read_text(encoding="utf-8")


def names() -> list[str]:
    """Every named query, sorted."""
    return sorted(path.stem for path in QUERIES_DIR.glob("*.sql"))
