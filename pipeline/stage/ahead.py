"""Staging started ahead of a run, beside its start-up.

`make run` spends most of a second between knowing that something is new and starting the staging
step: importing Dagster's storage, opening the instance, building the definitions, writing the
run's planned events (Python, holding the GIL). Staging is mostly DuckDB and hashing, which let go
of the GIL, so the run's process starts it in a side thread as soon as it knows inputs changed.
The staging step then waits for that thread (:func:`take`) before it finds and stages the inputs
itself: the contents staged ahead are already there (staging is content-addressed), an input that
changed since is staged by the step, and whatever went wrong ahead the step meets again and
reports. Only the contents count as staged by the run; nothing ahead touches a table.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.contracts.sources import SourceFile
from pipeline.stage.store import StagingStore

__all__ = ["start", "take"]

THREAD_NAME = "staging-ahead"


@dataclass
class _Ahead:
    thread: threading.Thread
    new: set[str] = field(default_factory=set)


_lock = threading.Lock()
_pending: dict[Path, _Ahead] = {}


def start(find: Callable[[], list[SourceFile]], staging_root: Path) -> None:
    """Stage the inputs ``find`` gives into ``staging_root`` in a side thread (not a daemon: a process
    that ends before its run took the result still waits for it at exit, never stopping it mid-file)."""

    def run() -> None:
        try:
            sources = find()
            ahead.new = StagingStore(staging_root).stage(sources)["new"]
        except Exception:  # noqa: BLE001 - the staging step meets it again and reports it
            ahead.new = set()

    with _lock:
        if staging_root in _pending:
            return
        ahead = _Ahead(threading.Thread(target=run, name=THREAD_NAME))
        _pending[staging_root] = ahead
    ahead.thread.start()


def take(staging_root: Path) -> set[str]:
    """The contents (sha256 + kind) staged ahead into ``staging_root``, once that staging ended;
    an empty set when none was started."""
    with _lock:
        ahead = _pending.pop(staging_root, None)
    if ahead is None:
        return set()
    ahead.thread.join()
    return ahead.new
