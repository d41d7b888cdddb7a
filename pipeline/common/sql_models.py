"""SQL model files: one model per file, each opening with a parsed header that declares what it
reads, what it creates and how it is stored. The run order is the dependency order of those
declarations (graphlib), never the file names.

    /* MODEL
    name: series_versions
    materialized: table              # view (default) | table | temp_table
    incremental_key: [kernel_name, gpu_name]
    incremental_key_from: fact_measurement   # the view whose rows carry the key (default)
    fact_columns: [kernel_name]      # a view's columns taken unchanged from fact_measurement
    fact_steps: {columns: [axis, step_rank], sql: "select ... from touched"}  # its steps' versions and runs
    incremental_merge: {measurements: sum, last_seen: max}  # an aggregate of facts, merged with new ones
    depends_on: [ranked_measurements, regression_settings]
    description: one row per series and version, summarizing every run of it
    */

`creates` defaults to the model's name; a model that creates several temp tables lists them.
A test checks each declaration against the tables the SQL really reads (sqlglot).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

HEADER_OPEN = "/* MODEL"
HEADER_CLOSE = "*/"


class FactSteps(BaseModel):
    """``sql`` reads the temp table ``touched`` (the touched key values, ``columns`` among them)
    and gives each of its rows (``t.*``) with a ``liger_version`` or a ``snapshot``: every fact
    behind a row of the view with those key values has that row's key columns taken from the facts
    (`fact_columns`) and one of its versions, or was seen in one of its snapshots (a gh-pages run).
    A superset is fine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    columns: tuple[str, ...] = Field(min_length=1)
    sql: str


# aggregates whose result over all rows is the same aggregate over their results on any split
SELF_MERGING = frozenset({"sum", "min", "max", "bool_and", "bool_or"})


class ModelHeader(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z_][a-z0-9_]*$")
    description: str = ""
    materialized: Literal["view", "table", "temp_table"] = "view"
    depends_on: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    incremental_key: tuple[str, ...] = ()
    # The view whose rows carry the key: a new fact touches the key values of the rows this view
    # gives for the new facts alone, and a model row with key value K reads only its rows with K.
    incremental_key_from: str = "fact_measurement"
    # Columns a view takes unchanged from fact_measurement: its row with value v there was made only
    # from facts with v there. A model keyed on this view also narrows the facts by these key columns.
    fact_columns: tuple[str, ...] = ()
    # How a view's step maps back to the facts: a model keyed on this view with `columns` in its key
    # narrows the facts to those of the touched steps as well (see FactSteps).
    fact_steps: FactSteps | None = None
    # A model of aggregates over the facts whose row, over old and new facts together, is its row
    # over the old ones merged with its row over the new ones alone: rows with every other column
    # equal are one row, these columns merged by an aggregate over those rows (a function name,
    # applied to the column, or an expression: `list_median(flatten(list(p50_runs)))`). An
    # incremental run then reads the new facts only, not every fact of the touched keys.
    incremental_merge: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _defaults(self) -> ModelHeader:
        if not self.creates:
            object.__setattr__(self, "creates", (self.name,))
        if self.incremental_key and self.materialized != "table":
            raise ValueError("incremental_key needs materialized: table")
        if self.incremental_merge and not self.incremental_key:
            raise ValueError("incremental_merge needs an incremental_key")
        for column, rule in self.incremental_merge.items():
            # a function alone must merge its own results (a median of medians is not the median)
            if rule.isidentifier() and rule not in SELF_MERGING:
                raise ValueError(f"incremental_merge {column}: {rule} does not merge itself; write the expression")
        if set(self.incremental_merge) & set(self.incremental_key):
            raise ValueError("incremental_merge names a key column")
        return self


@dataclass(frozen=True)
class SqlModel:
    header: ModelHeader
    path: Path
    sql: str  # the body, header removed

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def materialize(self) -> bool:
        return self.header.materialized == "table"


@dataclass(frozen=True)
class PythonModel:
    """A step written in Python that takes part in a folder's dependency graph."""

    header: ModelHeader
    run: Callable = field(compare=False)

    @property
    def name(self) -> str:
        return self.header.name


class ModelError(ValueError):
    pass


def read_model(path: Path) -> SqlModel:
    text = path.read_text()
    if not text.startswith(HEADER_OPEN):
        raise ModelError(f"{path}: a model file starts with its {HEADER_OPEN} header")
    header_text, closed, body = text[len(HEADER_OPEN) :].partition(HEADER_CLOSE)
    if not closed:
        raise ModelError(f"{path}: the {HEADER_OPEN} header is not closed with {HEADER_CLOSE}")
    try:
        header = ModelHeader.model_validate(yaml.safe_load(header_text) or {})
    except Exception as exc:
        raise ModelError(f"{path}: bad header: {exc}") from exc
    if header.name != path.stem:
        raise ModelError(f"{path}: header name {header.name!r} differs from the file name")
    return SqlModel(header, path, body.lstrip("\n"))


def load_models(folder: Path, inputs: Iterable[str] = (), extra: Iterable[PythonModel] = ()) -> list:
    """The folder's models (and any Python steps) in dependency order. Every dependency must be
    created by a model of the graph or be one of `inputs` (what the caller registers first)."""
    models = [read_model(p) for p in sorted(folder.glob("*.sql"))] + list(extra)
    return order_models(models, inputs)


def order_models(models: list, inputs: Iterable[str] = ()) -> list:
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
