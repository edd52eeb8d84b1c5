"""Parquet export of published views or of a whole snapshot, never as a half-written file."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricscope.warehouse.db import (
    PUBLISHED_RELATIONS,
    SnapshotInfo,
    WarehouseError,
    read_connection,
)


@dataclass(frozen=True)
class ExportResult:
    snapshot: SnapshotInfo
    files: dict[str, int]  # relation -> rows written
    directory: Path


def export_parquet(
    path: Path, out_dir: Path, relations: Sequence[str] | None = None
) -> ExportResult:
    """Write each relation to ``out_dir/<relation>.parquet`` plus a manifest.

    Every file is written under a temporary name in ``out_dir`` and renamed into
    place, so a reader of ``out_dir`` never sees a partial file. All relations
    come from one read-only connection, i.e. one snapshot.
    """
    chosen = sorted(PUBLISHED_RELATIONS) if not relations else list(relations)
    unknown = [r for r in chosen if r not in PUBLISHED_RELATIONS]
    if unknown:
        choices = ", ".join(sorted(PUBLISHED_RELATIONS))
        raise WarehouseError(f"cannot export {', '.join(unknown)}: choose from {choices}")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WarehouseError(f"cannot create the export directory {out_dir}: {exc}") from exc
    files: dict[str, int] = {}
    with read_connection(path) as (con, snapshot):
        for relation in chosen:
            final = out_dir / f"{relation}.parquet"
            partial = out_dir / f".{relation}.parquet.partial-{os.getpid()}"
            try:
                con.execute(
                    f"copy (select * from {relation}) to '{_sql_path(partial)}' (format parquet)"
                )
                os.replace(partial, final)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
            row = con.execute(f"select count(*) from {relation}").fetchone()
            files[relation] = int(row[0]) if row else 0
    manifest = {
        "snapshot_id": snapshot.snapshot_id,
        "snapshot_hash": snapshot.snapshot_hash,
        "published_at": snapshot.published_at.isoformat(),
        "rows": files,
    }
    partial_manifest = out_dir / f".manifest.json.partial-{os.getpid()}"
    partial_manifest.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(partial_manifest, out_dir / "manifest.json")
    return ExportResult(snapshot, files, out_dir)


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")
