"""A SQL model file's header: one model per file, opening with a YAML block that declares what it
reads, what it creates and how it is kept, in sqlmesh's words (`kind`, `partitioned_by`, `grain`).

    /* MODEL
    name: series_steps
    kind: INCREMENTAL_BY_PARTITION     # VIEW | FULL | INCREMENTAL_BY_PARTITION | AUDIT (required)
    partitioned_by: [kernel_name, gpu_name]
    partitions_from: fact_measurement  # the view whose rows carry the partition key (default)
    when_matched: {measurements: sum, last_seen: max}  # merge new rows into kept ones of equal grain
    keep_while: "abs(n.x - k.x) < 0.05 * k.x"   # a versioned input: a kept row stays while this holds
    run_column: computed_at_run        # stamped with the run that wrote the row
    moved_by: {noise_judged: "select ... from noise_judged__moved"}  # partitions a moved input reaches
    chain: {steps: series_steps, within: [kernel_provider]}  # pairs of consecutive steps, kept per step
    grain: [kernel_name, gpu_name, step_rank]          # the columns that name one row (required, audited)
    fact_columns: [kernel_name]        # a view's columns taken unchanged from fact_measurement
    fact_steps: {columns: [axis, step_rank], sql: "select ... from touched"}
    depends_on: [ranked_measurements, regression_settings]
    description: one row per series and step
    */

The kinds are sqlmesh's: an AUDIT (sql/checks) returns the rows that break a rule; a VIEW is computed
when read; a FULL model is a table recomputed whole; an
INCREMENTAL_BY_PARTITION model is a table whose partitions (rows of one `partitioned_by` value) that
new facts touch are replaced, the others kept. `when_matched` (sqlmesh's clause of
INCREMENTAL_BY_UNIQUE_KEY) makes such a model merge its rows over the new facts alone into the kept
rows alike in every other column. `creates` defaults to the model's name; a model that creates several
tables lists them. A test checks each declaration against the tables the SQL really reads (sqlglot).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

HEADER_OPEN = "/* MODEL"
HEADER_CLOSE = "*/"
# aggregates whose result over all rows is the same aggregate over their results on any split
SELF_MERGING = frozenset({"sum", "min", "max", "bool_and", "bool_or"})
Kind = Literal["VIEW", "FULL", "INCREMENTAL_BY_PARTITION", "AUDIT"]
# what every model file's header must say: how it is kept, and which columns name one of its rows
REQUIRED_IN_FILE = ("kind", "grain")


class ModelError(ValueError):
    pass


class FactSteps(BaseModel):
    """``sql`` reads the temp table ``touched`` (the touched partition values, ``columns`` among
    them) and gives each of its rows (``t.*``) with a ``liger_version`` or a ``snapshot``: every fact
    behind a row of the view with those values has that row's key columns taken from the facts
    (`fact_columns`) and one of its versions, or was seen in one of its snapshots (a gh-pages run).
    A superset is fine."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    columns: tuple[str, ...] = Field(min_length=1)
    sql: str


class Chain(BaseModel):
    """A model of pairs of consecutive steps (a `lag` over a chain): its row of a pair is named by the
    pair's later step (``to_step``), and reads its partition's rows at that step and at the step
    before it in the chain of ``steps`` (a stored model keyed by the partition and ``step``; the
    chains split further by ``within``, e.g. the provider). A new step S is refreshed with the pair
    ending at S and the pair after it (and ``around`` steps either side of those), from the rows of
    those steps and of the steps around and before them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: str
    step: str = "step_rank"
    to_step: str = "to_step_rank"
    within: tuple[str, ...] = ()
    # a row also reads the rows this many steps before and after it in its own chain of pairs
    # (`verdicts`: a pair's neighbours decide `transient`): those rows' rows are refreshed too
    around: int = Field(0, ge=0, le=3)


class ModelHeader(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z_][a-z0-9_]*$")
    description: str = ""
    kind: Kind = "VIEW"
    depends_on: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    # the columns that name one row; a script that creates several tables names each one's
    grain: tuple[str, ...] | dict[str, tuple[str, ...]] = ()
    partitioned_by: tuple[str, ...] = ()
    # The view whose rows carry the partition key: a new fact touches the partitions of the rows this
    # view gives for the new facts alone, and a model row of partition K reads only its rows of K.
    partitions_from: str = "fact_measurement"
    # Columns a view takes unchanged from fact_measurement: its row with value v there was made only
    # from facts with v there. A model partitioned on this view also narrows the facts by them.
    fact_columns: tuple[str, ...] = ()
    # How a view's step maps back to the facts: a model partitioned on this view with `columns` in
    # its key narrows the facts to those of the touched steps as well (see FactSteps).
    fact_steps: FactSteps | None = None
    # A model of aggregates over the facts whose row, over old and new facts together, is its row over
    # the old ones merged with its row over the new ones alone: rows with every other column equal are
    # one row, these columns merged by an aggregate over those rows (a function name, applied to the
    # column, or an expression: `list_median(flatten(list(p50_runs)))`). An incremental run then reads
    # the new facts only, not every fact of the touched partitions.
    when_matched: dict[str, str] = Field(default_factory=dict)
    # A versioned input (the noise a verdict was judged at): on an incremental build the model is
    # computed whole, and a row of a kept key that changed keeps its kept version while this predicate
    # over the kept row `k` and the new one `n` holds. Rows beyond it, new keys and gone keys are
    # replaced; their keys are the temp table `<name>__moved` for the models that read it (`moved_by`).
    keep_while: str = ""
    # The column the build stamps with the published run's number when it writes a row (NULL in the
    # SQL): the run a versioned row was computed at.
    run_column: str = ""
    # versioned input (a model this one reads, directly or through others) -> a query over
    # `<input>__moved` giving the partitions of this model its moved rows reach: refreshed beside the
    # partitions new facts touch.
    moved_by: dict[str, str] = Field(default_factory=dict)
    # pairs of consecutive steps refreshed per step, not per partition (see Chain)
    chain: Chain | None = None

    @model_validator(mode="after")
    def _defaults(self) -> ModelHeader:
        if not self.creates:
            object.__setattr__(self, "creates", (self.name,))
        if isinstance(self.grain, dict) and set(self.grain) != set(self.creates):
            raise ValueError(f"grain names {sorted(self.grain)}, the script creates {sorted(self.creates)}")
        if self.partitioned_by and self.kind != "INCREMENTAL_BY_PARTITION":
            raise ValueError("partitioned_by needs kind: INCREMENTAL_BY_PARTITION")
        if self.kind == "INCREMENTAL_BY_PARTITION" and not self.partitioned_by:
            raise ValueError("kind INCREMENTAL_BY_PARTITION needs partitioned_by")
        if self.when_matched and not self.partitioned_by:
            raise ValueError("when_matched needs partitioned_by")
        if (self.keep_while or self.moved_by or self.run_column or self.chain) and not self.partitioned_by:
            raise ValueError("keep_while, run_column, moved_by and chain need partitioned_by")
        for column, rule in self.when_matched.items():
            # a function alone must merge its own results (a median of medians is not the median)
            if rule.isidentifier() and rule not in SELF_MERGING:
                raise ValueError(f"when_matched {column}: {rule} does not merge itself; write the expression")
        if set(self.when_matched) & set(self.partitioned_by):
            raise ValueError("when_matched names a partition column")
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
        """Stored as a table (FULL or incremental), not computed when read."""
        return self.header.kind != "VIEW"

    def render(self, template: dict[str, str] | None = None) -> str:
        """The body with each ``{token}`` of ``template`` replaced: rules that live in contracts/
        only, written into the model where it names them."""
        sql = self.sql
        for token, expr in (template or {}).items():
            sql = sql.replace(token, expr)
        return sql


@dataclass(frozen=True)
class PythonModel:
    """A step written in Python that takes part in a folder's dependency graph."""

    header: ModelHeader
    run: Callable = field(compare=False)

    @property
    def name(self) -> str:
        return self.header.name

    @property
    def materialize(self) -> bool:
        return False


def read_model(path: Path) -> SqlModel:
    text = path.read_text()
    if not text.startswith(HEADER_OPEN):
        raise ModelError(f"{path}: a model file starts with its {HEADER_OPEN} header")
    header_text, closed, body = text[len(HEADER_OPEN) :].partition(HEADER_CLOSE)
    if not closed:
        raise ModelError(f"{path}: the {HEADER_OPEN} header is not closed with {HEADER_CLOSE}")
    try:
        declared = yaml.safe_load(header_text) or {}
        header = ModelHeader.model_validate(declared)
    except Exception as exc:
        raise ModelError(f"{path}: bad header: {exc}") from exc
    if header.name != path.stem:
        raise ModelError(f"{path}: header name {header.name!r} differs from the file name")
    missing = [key for key in REQUIRED_IN_FILE if not declared.get(key)]
    if missing:
        raise ModelError(f"{path}: the header must declare {' and '.join(missing)} (sqlmesh's words)")
    return SqlModel(header, path, body.lstrip("\n"))
