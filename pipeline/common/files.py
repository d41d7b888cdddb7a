"""Atomic writes: a file is written aside, flushed and renamed onto its final name (staging, the
git backfill's blobs, the DuckDB file, report stamps)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def atomic_path(final: Path) -> Path:
    """A sibling temp path; rename it onto ``final`` once fully written."""
    final.parent.mkdir(parents=True, exist_ok=True)
    return final.with_name(f".{final.name}.{uuid.uuid4().hex}.tmp")


def publish(tmp: Path, final: Path) -> None:
    """The one atomic write of this project: flush ``tmp`` to disk, then rename it onto ``final``
    (a crash leaves the old file or the complete new one, never a torn one)."""
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, final)


def write_atomic(path: Path, data: bytes) -> None:
    """``data`` as the whole new content of ``path``, written aside and published (nothing left
    behind on failure)."""
    tmp = atomic_path(path)
    try:
        tmp.write_bytes(data)
        publish(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
