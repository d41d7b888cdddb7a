"""Modules the later steps of a run import (change points, report plots, DuckDB's Arrow
registration), about a second each, loaded by a side thread while the merge runs in delta-rs and
DuckDB, which release the GIL: the imports then overlap that work instead of following it.
Started any earlier, they would contend for the GIL with the run's own Python start-up (Dagster
writing its planned events took 2 s instead of 0.4 s beside them)."""

from __future__ import annotations

import importlib
import threading

MODULES = ("pandas", "ruptures.detection", "matplotlib.figure", "matplotlib.backends.backend_agg")
_started = threading.Event()


def start() -> None:
    """Start the imports once per process; a second call does nothing."""
    if _started.is_set():
        return
    _started.set()

    def run() -> None:
        for name in MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the step that needs the module reports it
                return

    threading.Thread(target=run, name="prefetch-imports", daemon=True).start()
