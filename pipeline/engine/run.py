"""Run a folder's models in dependency order on one target: each model becomes a view, a table or
a Python step there, as its header's `kind` says. The DuckDB build, `pipeline.connect()`,
`compare`, the model stage and Spark all go through `run_models`; they differ only in the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Protocol

import duckdb

from pipeline.engine.header import PythonModel, SqlModel


class Target(Protocol):
    """Where models are made: the engine says what each model is, the target how it is written."""

    def view(self, model: SqlModel, sql: str) -> None: ...

    def table(self, model: SqlModel, sql: str) -> None: ...

    def python(self, model: PythonModel) -> None: ...

    def given(self, model: SqlModel | PythonModel, relation: str) -> None: ...


@contextmanager
def naming(name: str, kind: str) -> Iterator[None]:
    """A DuckDB error while model ``name`` is made is raised again naming the model and its kind (an
    out-of-memory deep in a build otherwise names only the statement), of the same class, so a
    caller that catches `duckdb.OutOfMemoryException` still does, with the original as its cause.
    An error already named (a model made inside another's step) keeps its name."""
    try:
        yield
    except duckdb.Error as err:
        if getattr(err, "liger_model", None):
            raise
        named = type(err)(f"model {name} ({kind}): {err}")
        named.liger_model = name
        raise named from err


def create_view(con: duckdb.DuckDBPyConnection, name: str, sql: str, schema: str | None = None) -> None:
    """Bound when first read, not here: binding a view binds every view under it again, so a chain of
    fifty made the views of one connection cost seconds each (bench/HISTORY.md)."""
    qualified = f'"{schema}"."{name}"' if schema else f'"{name}"'
    con.execute(f"create or replace view {qualified} with (defer_binding) as\n{sql}")


class DuckTarget:
    """A DuckDB connection. ``materialize``: a FULL or incremental model is stored as a table (so
    later models read rows, not a re-planned chain), else every model is a view (a one-off look)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, materialize: bool = True):
        self.con, self.materialize = con, materialize

    def view(self, model: SqlModel, sql: str) -> None:
        create_view(self.con, model.name, sql)

    def table(self, model: SqlModel, sql: str) -> None:
        if not self.materialize:
            return self.view(model, sql)
        self.con.execute(f'create or replace table "{model.name}" as\n{sql}')

    def python(self, model: PythonModel) -> None:
        model.run(self.con)

    def given(self, model: SqlModel | PythonModel, relation: str) -> None:
        self.con.execute(f'create or replace table "{model.name}" as select * from "{relation}"')


class DuckScripts(DuckTarget):
    """A folder of scripts (sql/model): each file's body is the statements that create what its
    header's `creates` lists, executed as written."""

    def view(self, model: SqlModel, sql: str) -> None:
        self.con.execute(sql)

    table = view


def run_models(
    models: Iterable[SqlModel | PythonModel],
    target: Target,
    *,
    template: Mapping[str, str] | None = None,
    given: Mapping[str, str] | None = None,
) -> list[str]:
    """Make each model on ``target`` in the order given (`graph.load_models`'s). ``template``: the
    tokens the bodies name (`SqlModel.render`). ``given``: model name -> a relation already on the
    target to take instead of running the model. Returns the models made, in order."""
    applied = []
    for model in models:
        with naming(model.name, model.header.kind):
            if given and model.name in given:
                target.given(model, given[model.name])
            elif isinstance(model, PythonModel):
                target.python(model)
            elif model.materialize:
                target.table(model, model.render(dict(template or {})))
            else:
                target.view(model, model.render(dict(template or {})))
        applied.append(model.name)
    return applied
