"""Modules the later steps of a run import, slow to import, loaded by a side thread while
the merge and the DuckDB build run in delta-rs and DuckDB, which release the GIL: the imports
then overlap that work instead of following it. Started before the run, they contended for the
GIL with Dagster writing the run's planned events, and both took longer."""

from __future__ import annotations

import importlib
import threading

# change points (numpy) and DuckDB's Arrow registration (pandas, when a dependency group installed
# it: `make run`'s install has none)
ANALYSIS = ("numpy", "pandas")
# the report's plots: drawn again only where their values changed, so a small run often draws none
PLOTS = ("matplotlib.figure", "matplotlib.backends.backend_agg")
# the dashboard's frames, imported beside its first queries
DASHBOARD = ("polars",)
_started: set[tuple[str, ...]] = set()
_lock = threading.Lock()


def start(modules: tuple[str, ...]) -> threading.Thread | None:
    """Import ``modules`` in a side thread, once per process; the thread, or None if started before."""
    with _lock:
        if modules in _started:
            return None
        _started.add(modules)

    def run() -> None:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the step that needs the module reports it
                continue  # a missing module must not keep the next one from loading

    thread = threading.Thread(target=run, name="prefetch-imports", daemon=True)
    thread.start()
    return thread
