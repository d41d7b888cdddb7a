"""A folder's models in the order their declared dependencies give (graphlib), never file names."""

from __future__ import annotations

from collections.abc import Iterable
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from pipeline.engine.header import ModelError, PythonModel, SqlModel, read_model


def load_models(
    folder: Path, inputs: Iterable[str] = (), extra: Iterable[PythonModel] = (), skip: Iterable[Path] = ()
) -> list:
    """The folder's models, its sub-folders' included (and any Python steps), in dependency order.
    Every dependency must be created by a model of the graph or be one of `inputs` (what the caller
    registers first)."""
    skipped = set(skip)
    models = [read_model(p) for p in sorted(folder.rglob("*.sql")) if p not in skipped] + list(extra)
    return order_models(models, inputs)


def order_models(models: list[SqlModel | PythonModel], inputs: Iterable[str] = ()) -> list:
    known = set(inputs)
    creator: dict[str, str] = {}
    for m in models:
        for table in m.header.creates:
            if table in creator:
                raise ModelError(f"{table} is created by both {creator[table]} and {m.name}")
            creator[table] = m.name
    by_name = {m.name: m for m in models}
    graph = {}
    for m in models:
        deps = set()
        for dep in m.header.depends_on:
            if dep in creator:
                deps.add(creator[dep])
            elif dep not in known:
                raise ModelError(f"{m.name} depends on {dep}, which no model creates and no caller provides")
        graph[m.name] = deps - {m.name}
    try:
        # static_order is deterministic for a given graph; ties keep file order
        return [by_name[n] for n in TopologicalSorter(graph).static_order()]
    except CycleError as exc:
        raise ModelError(f"dependency cycle: {exc.args[1]}") from exc
