"""Process-wide locks: an exclusive, non-blocking flock held while a block runs.

The lock file says who holds it (pid, what, since when), so the one refused can say so. The
kernel drops a flock when its holder dies, however it dies: a stale file never blocks.
"""

from __future__ import annotations

import fcntl
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


class LockHeld(Exception):
    """Another process holds the lock; ``holder`` is what the lock file says of it."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by {holder}")
        self.path = path
        self.holder = holder


class ProcessLock:
    """``with ProcessLock(path, "fabricscope refresh"):`` or LockHeld, at once."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self._handle: Any = None

    def __enter__(self) -> ProcessLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "a process that has not written its name yet"
            handle.close()
            raise LockHeld(self.path, holder) from None
        handle.seek(0)
        handle.truncate()
        handle.write(
            f"pid {os.getpid()}, {self.what}, since {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC"
        )
        handle.flush()
        self._handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.truncate(0)
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None


def refresh_lock_path(warehouse: Path) -> Path:
    """The one-refresh-at-a-time lock of a warehouse (beside its writer lock)."""
    return warehouse.with_name(warehouse.name + ".refresh.lock")
