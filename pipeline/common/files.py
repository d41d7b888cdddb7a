"""Atomic writes: a file is written aside, flushed and renamed onto its final name (staging, the
git backfill's blobs, the DuckDB file, report stamps)."""

from __future__ import annotations

import os
import threading
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


class BackgroundFlush:
    """Writes a file's dirty pages to disk in a thread while the caller goes on; :meth:`join` waits for
    it. A copy of a large file leaves gigabytes dirty, and the first fsync after it (the next
    checkpoint's, or `publish`'s) would otherwise wait for all of them on the caller's path. Nothing
    depends on this flush: `publish` still flushes the file before renaming it. The file stays open
    until :meth:`join`: closing any descriptor of a file drops the fcntl locks this process holds on
    it (a database's own), so call it once the file's other user has closed it."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._thread = threading.Thread(target=self._flush, name=f"flush {path.name}", daemon=True)
        self._thread.start()

    def _flush(self) -> None:
        try:
            os.fsync(self._fd)
        except OSError:
            pass  # `publish`'s own fsync reports a failing disk

    def join(self) -> None:
        self._thread.join()
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


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
