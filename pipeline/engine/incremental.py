"""The incremental refresh of a folder's stored models over new facts.

A model of kind INCREMENTAL_BY_PARTITION is refreshed only for the partitions (values of its
`partitioned_by`) that facts committed since the file's last state touch; with `when_matched`, its
rows over the new facts alone are merged into the kept ones. A FULL model, or any model when
something can move every row, is recomputed whole. The facts are `delta_fact_measurement` with their
`fact_provenance` (the names every fact view reads); the caller has made `reattributed_digest`
(earlier facts a new sighting gave another gh-pages run) and `touched_provenance` (the provenance
rows it recomputed) before the refresh.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass

import duckdb

from pipeline.common import duck
from pipeline.engine.header import FactSteps, SqlModel
from pipeline.engine.run import create_view, naming

# A chain model reached by moved rows of a versioned input (the judged noise) is narrowed to the
# partitions they reach up to this share of its steps, and recomputed whole beyond it: the narrowed
# refresh costs about 1.5-2.3 times a whole recompute's share of those steps (bench/HISTORY.md).
MOVED_REACH_WHOLE = 0.5


def refresh_models(
    con: duckdb.DuckDBPyConnection,
    models: list[SqlModel],
    full: bool = True,
    since_seq: int = 0,
    moved: bool = False,
    keep_views: bool = False,
    lookups: Iterable[str] = (),
    seq: int | None = None,
) -> dict:
    """``models`` in dependency order on a connection that has their inputs: a VIEW as a view, a
    stored model as ``<name>__materialized`` (its query kept as view ``<name>__definition``),
    refreshed for the touched partitions unless ``full``. ``since_seq``: the run the stored rows
    are of. ``moved``: an earlier fact now belongs to another gh-pages run (a new sighting), so
    partitions finer than the fact's own columns may have lost it: those models are recomputed
    whole. ``keep_views``: the file has the models' views already. ``lookups``: small tables a
    model may read beside its source without reading the facts again. ``seq``: the run the build
    brings the file to (stamped in a model's `run_column`)."""
    refresh = _Refresh(con, models, since_seq, moved, frozenset(lookups), seq)
    applied, refreshed, seconds = [], {}, {}
    try:
        for model in models:
            started = time.perf_counter()
            with naming(model.name, f"{model.header.kind}, {'full' if full else 'incremental'} build"):
                if not model.materialize:
                    if not keep_views:
                        create_view(con, model.name, model.sql)
                    applied.append(model.path.name)
                    continue
                definition, table = f"{model.name}__definition", f"{model.name}__materialized"
                if not keep_views:
                    create_view(con, definition, model.sql)
                refreshed[model.name] = refresh.model(model, definition, table, full)
                if not keep_views:
                    create_view(con, model.name, f'select * from "{table}"')
            applied.append(model.path.name)
            seconds[model.name] = round(time.perf_counter() - started, 3)
    finally:
        refresh.drop()
    return {"applied": applied, "refreshed": refreshed, "seconds": seconds}


@dataclass
class _Refresh:
    """One refresh's state: the partitions touched per (source, key), found once and shared."""

    con: duckdb.DuckDBPyConnection
    models: list[SqlModel]
    since_seq: int
    moved: bool
    lookups: frozenset[str]
    seq: int | None = None

    def __post_init__(self) -> None:
        self.touched: dict[tuple, Touched] = {}
        self.moved_rows: dict[str, int] = {}  # versioned model -> rows moved (`<name>__moved`)
        self.widened: list[Touched] = []
        self.chains: dict[str, tuple[str, str, str]] = {}  # `_chain_steps`' tables
        self.reached: dict[str, str] = {}  # chain model -> its partitions moved rows reach (`_moved_reach`)
        self.reach: dict[str, float] = {}  # chain model -> the share of its steps they reach
        self.whole: set[str] = set()  # the stored models recomputed whole in this refresh
        self.fact_columns = {m.name: m.header.fact_columns for m in self.models}
        self.fact_steps = {m.name: m.header.fact_steps for m in self.models}

    def model(self, model: SqlModel, definition: str, table: str, full: bool) -> str:
        done = self._model(model, definition, table, full)
        if done.startswith("full"):
            self.whole.add(model.name)
        return done

    def _model(self, model: SqlModel, definition: str, table: str, full: bool) -> str:
        con, header = self.con, model.header
        if header.keep_while:
            return self.versioned(model, definition, table, full)
        key, source = list(header.partitioned_by), header.partitions_from
        finer = source != "fact_measurement"
        if full or not duck.has_tables(con, table) or not key or (finer and self.moved):
            con.execute(f'create or replace table "{table}" as select * from "{definition}"')
            return "full"
        if header.when_matched and not self.moved:
            return merge_new_facts(con, model, definition, table, self.since_seq)
        if header.chain is not None:
            whole = sorted(set(self._stored_inputs(model)) & self.whole)
            if whole:
                # an input recomputed whole may have moved any step: so may this model
                con.execute(f'create or replace table "{table}" as select * from "{definition}"')
                return f"full ({', '.join(whole)} recomputed whole)"
            reach = self._moved_reach(model)
            if reach > MOVED_REACH_WHOLE:
                con.execute(f'create or replace table "{table}" as select * from "{definition}"')
                return f"full (judged noise moved: {reach:.0%} of its steps reached)"
            done = self.chain(model, definition, table)
            return f"{done} (judged noise moved: {reach:.0%} of its steps reached)" if reach else done
        found = self._moved_by(model, self._touched(source, key))
        return found.refresh(con, model, definition, table, self._finer_deps(model), self.lookups)

    def chain(self, model: SqlModel, definition: str, table: str) -> str:
        """A model of pairs of consecutive steps (`chain`), refreshed per step: the pairs ending at a
        touched step or at the step after it (in any chain of its partition), and ``around`` steps
        either side of those, computed from its inputs narrowed to those steps and the steps around
        and before them: a window (`lag`, `lead`) over them gives those rows exactly, and a new step
        of a deep series costs its pairs, not the series' history."""
        con, chain, key = self.con, model.header.chain, list(model.header.partitioned_by)
        found = self._touched(model.header.partitions_from, [*key, chain.step])
        reached = self.reached.get(model.name)
        if found.count == 0 and not reached:
            return "untouched"
        rows, pairs, steps = self._chain_steps(model, found, reached)
        on = " and ".join([*(f"k.{c} is not distinct from t.{c}" for c in key), f"k.{chain.step} = t.{chain.to_step}"])
        con.execute(f'delete from "{table}" t where exists (select 1 from {rows} k where {on})')
        chained = {m.name: m.header.chain for m in self.models if m.header.chain is not None}
        with ExitStack() as stack:
            for dep in self._stored_inputs(model):
                columns = {d[0] for d in con.execute(f'select * from "{dep}" limit 0').description}
                # an input kept per step itself names a row by its pair's later step: the pairs' rows;
                # any other input by its step: the steps' rows and the steps' before them
                step, narrow = (chained[dep].to_step, pairs) if dep in chained else (chain.step, steps)
                if step in columns:
                    cols = ", ".join(f"f.{c}" for c in [*key, step])
                    stack.enter_context(narrowed(con, dep, f"where hash({cols}) in (select h from {narrow}_hash)"))
            con.execute(f'insert into "{table}" by name select t.* from "{definition}" t semi join {rows} k on {on}')
        return f"{duck.scalar(con, f'select count(*) from {rows}')} step(s) of pairs"

    def _moved_reach(self, model: SqlModel) -> float:
        """The share of a chain model's steps (``chain.steps``' rows) in the partitions that the moved
        rows of its versioned inputs reach (`moved_by`); those steps (partition, step and their rows
        ``n``) are kept as the temp table `<name>__reached` for its refresh. 0 when none moved."""
        moved = [sql for dep, sql in model.header.moved_by.items() if self.moved_rows.get(dep)]
        if not moved:
            return self._inherited_reach(model)
        key, chain = list(model.header.partitioned_by), model.header.chain
        same = " and ".join(f"s.{c} is not distinct from m.{c}" for c in key)
        cols = ", ".join(f"s.{c}" for c in [*key, chain.step])
        reached = self.reached[model.name] = f"{model.name}__reached"
        union = " union ".join(f"({q})" for q in moved)
        self.con.execute(f"""create or replace temp table {reached} as
            select {cols}, count(*) as n from {chain.steps} s semi join ({union}) m on {same} group by all""")
        steps = duck.scalar(self.con, f"select coalesce(sum(n), 0) from {reached}")
        total = duck.scalar(self.con, f"select count(*) from {chain.steps}")
        self.reach[model.name] = steps / total if total else 0.0
        return self.reach[model.name]

    def _inherited_reach(self, model: SqlModel) -> float:
        """A chain model made of another's rows (a stored input of the same partitions and steps) that
        moved rows reached is refreshed where that one was: its partitions reached, and its share."""
        by_name = {m.name: m for m in self.models}
        for dep in self._stored_inputs(model):
            header = by_name[dep].header
            if (
                dep in self.reached
                and header.partitioned_by == model.header.partitioned_by
                and (header.chain is not None and header.chain.steps == model.header.chain.steps)
            ):
                self.reached[model.name], self.reach[model.name] = self.reached[dep], self.reach[dep]
                return self.reach[model.name]
        return 0.0

    def _stored_inputs(self, model: SqlModel) -> list[str]:
        """The stored models ``model`` reads, directly or through views."""
        by_name = {m.name: m for m in self.models}
        found, seen, todo = [], set(), list(model.header.depends_on)
        while todo:
            dep = by_name.get(name := todo.pop())
            if dep is None or name in seen:
                continue
            seen.add(name)
            if dep.materialize:
                found.append(name)
            else:
                todo += dep.header.depends_on
        return sorted(found)

    def _chain_steps(self, model: SqlModel, found: Touched, reached: str | None) -> tuple[str, str, str]:
        """Temp tables (each with `<name>_hash`) of partition and step: the rows to compute (the
        touched steps and, in each chain, the step after each; every step of the partitions a moved
        versioned input reaches (``reached``: their partitions, `_moved_reach`); then ``around`` steps either side),
        the pairs they read (``around`` steps either side again) and the steps those read (and the
        step before each in each chain); found once per chain and touched keys."""
        chain, key = model.header.chain, list(model.header.partitioned_by)
        name = f"chain_{found.keys}_{chain.steps}_{len(key)}_{chain.around}" + (f"_{reached}" if reached else "")
        if name not in self.chains:
            cols = ", ".join([*key, chain.step])
            # `searched_before` / `searched_after`: the row's neighbours that way are in the table already
            self.con.execute(
                f"create or replace temp table {name}_rows as "
                f"select {cols}, false as searched_before, false as searched_after from {found.keys}"
            )
            self._neighbours(model, f"{name}_rows", after=True)
            for _ in range(chain.around):
                self._neighbours(model, f"{name}_rows", before=True, after=True)
            self.con.execute(f"create or replace temp table {name}_pairs as select * from {name}_rows")
            for _ in range(chain.around):
                self._neighbours(model, f"{name}_pairs", before=True, after=True)
            self.con.execute(f"create or replace temp table {name}_steps as select * from {name}_pairs")
            self._neighbours(model, f"{name}_steps", before=True)
            tables = (f"{name}_rows", f"{name}_pairs", f"{name}_steps")
            if reached:
                # every step of a reached partition, added after the neighbours: its steps' neighbours are
                # its own steps, and finding them by the range joins of `_neighbours` grew with the square
                # of a partition's depth
                for table in tables:
                    self.con.execute(
                        f"insert into {table} select *, true, true from "
                        f"(select {cols} from {reached} except select {cols} from {table})"
                    )
            for table in tables:
                self.con.execute(
                    f"create or replace temp table {table}_hash as select distinct hash({cols}) as h from {table}"
                )
            self.chains[name] = (f"{name}_rows", f"{name}_pairs", f"{name}_steps")
        return self.chains[name]

    def _neighbours(self, model: SqlModel, table: str, before: bool = False, after: bool = False) -> None:
        """Add to ``table`` (partition, step and the two `searched_` flags) the step before and/or after
        each of its steps in each chain of its partition (``chain.steps`` split by ``chain.within``).
        A row searched that way before is not searched again: its neighbours are in the table already
        (it only grows), and each search joins every step of the row's partition before or after it."""
        chain, key = model.header.chain, list(model.header.partitioned_by)
        step, same = chain.step, " and ".join(f"s.{c} is not distinct from t.{c}" for c in key)
        group = ", ".join([*(f"t.{c}" for c in [*key, step]), *(f"s.{c}" for c in chain.within)])
        cols = ", ".join([*key, step])
        found = [
            f"select {', '.join(f't.{c}' for c in key)}, {agg}(s.{step}) as {step} from {table} t "
            f"join {chain.steps} s on {same} and s.{step} {op} t.{step} where not t.searched_{way} group by {group}"
            for agg, op, way, wanted in (("max", "<", "before", before), ("min", ">", "after", after))
            if wanted
        ]
        self.con.execute(f"create or replace temp table {table}__more as {' union all '.join(found)}")
        ways = [f"searched_{way} = true" for way, wanted in (("before", before), ("after", after)) if wanted]
        self.con.execute(f"update {table} set {', '.join(ways)}")
        self.con.execute(
            f"insert into {table} select *, false, false from "
            f"(select {cols} from {table}__more except select {cols} from {table})"
        )
        self.con.execute(f"drop table {table}__more")

    def _finer_deps(self, model: SqlModel) -> list[str]:
        """The stored models ``model`` reads, directly or through views, keyed on its source by a key
        holding its own: their rows of key K come from the source's rows of K alone."""
        by_name = {m.name: m for m in self.models}
        key, source = set(model.header.partitioned_by), model.header.partitions_from
        return [
            name
            for name in self._stored_inputs(model)
            if by_name[name].header.partitions_from == source and key <= set(by_name[name].header.partitioned_by)
        ]

    def versioned(self, model: SqlModel, definition: str, table: str, full: bool) -> str:
        """A versioned input (`keep_while`): computed whole, then a kept key's row is replaced only
        when its new row is beyond `keep_while`; new and gone keys are replaced too. The keys
        replaced are `<name>__moved`, for the models that list it in `moved_by`."""
        con, header, key = self.con, model.header, list(model.header.partitioned_by)
        new, moved = f"{model.name}__new", f"{model.name}__moved"
        con.execute(f'create or replace temp table {new} as select * from "{definition}"')
        if header.run_column and self.seq is not None:
            con.execute(f'update {new} set "{header.run_column}" = {int(self.seq)}')
        if full or not duck.has_tables(con, table):
            con.execute(f'create or replace table "{table}" as select * from {new}')
            con.execute(f"drop table {new}")
            return "full"
        columns = [d[0] for d in con.execute(f"select * from {new} limit 0").description]
        same = " and ".join(f'k."{c}" is not distinct from n."{c}"' for c in columns if c != header.run_column)
        keys = ", ".join(f'coalesce(n."{c}", k."{c}") as "{c}"' for c in key)
        con.execute(f"""create or replace temp table {moved} as
            select {keys} from (select *, true as kept__ from "{table}") k
            full outer join (select *, true as new__ from {new}) n on {_on(key, "k", "n")}
            where k.kept__ is null or n.new__ is null or not ({same}) and not coalesce({header.keep_while}, false)""")
        count = self.moved_rows[model.name] = duck.scalar(con, f"select count(*) from {moved}")
        if count:
            con.execute(f'delete from "{table}" t where exists (select 1 from {moved} m where {_on(key, "t", "m")})')
            con.execute(
                f'insert into "{table}" by name select n.* from {new} n semi join {moved} m on {_on(key, "n", "m")}'
            )
        con.execute(f"drop table {new}")
        return f"{count} row(s) moved, the rest kept"

    def _moved_by(self, model: SqlModel, found: Touched) -> Touched:
        """``found`` and the partitions that the moved rows of a versioned input reach (`moved_by`)."""
        queries = [sql for dep, sql in model.header.moved_by.items() if self.moved_rows.get(dep)]
        if not queries:
            return found
        wider = Touched(found.source, found.key, f"touched_wider_{len(self.widened)}", found.fact_key)
        union = " union ".join([f"select {', '.join(found.key)} from {found.keys}", *(f"({q})" for q in queries)])
        self.con.execute(f"create or replace temp table {wider.keys} as {union}")
        wider.hash_keys(self.con)
        self.widened.append(wider)
        return wider

    def _touched(self, source: str, key: list[str]) -> Touched:
        if (source, tuple(key)) not in self.touched:
            fact_key = [c for c in key if c in self.fact_columns.get(source, ())]
            known = list(self.touched.values())
            found = Touched.find(self.con, source, key, fact_key, self.since_seq, len(self.touched), known)
            if fact_key and found.count:
                found.find_steps(self.con, self.fact_steps.get(source))
            self.touched[(source, tuple(key))] = found
        return self.touched[(source, tuple(key))]

    def drop(self) -> None:
        for t in (*self.touched.values(), *self.widened):
            t.drop(self.con)
        for name in self.moved_rows:
            self.con.execute(f"drop table if exists {name}__moved")
        for table in set(self.reached.values()):
            self.con.execute(f"drop table if exists {table}")
        for tables in self.chains.values():
            for table in tables:
                self.con.execute(f"drop table if exists {table}")
                self.con.execute(f"drop table if exists {table}_hash")
        self.con.execute("drop table if exists new_fact_digest")
        self.con.execute("drop table if exists new_fact_provenance")


@contextmanager
def narrowed(con: duckdb.DuckDBPyConnection, name: str, tail: str = "", rows: str = "") -> Iterator[None]:
    """View ``name`` narrowed for the block (``select f.* from <its own rows> f <tail>``, or the
    ``rows`` table's rows), then itself again: a temp view of that name, which DuckDB resolves
    before the build's schema, also inside the views that read ``name``. Renaming the view itself
    and back wrote the file's catalog four times a narrowing."""
    own = ".".join(f'"{part}"' for part in con.execute("select current_database(), current_schema()").fetchone())
    source = f'"{rows}" f' if rows else f'{own}."{name}" f {tail}'
    con.execute(f'create temp view "{name}" as select f.* from {source}')
    try:
        yield
    finally:
        con.execute(f'drop view temp."{name}"')


MOVED_DIGESTS = "select * from reattributed_digest"
NO_NEW_PROVENANCE = "(select * from new_fact_digest anti join new_fact_provenance using (measurement_digest))"


@contextmanager
def _new_facts(con: duckdb.DuckDBPyConnection, since_seq: int) -> Iterator[None]:
    """The fact views narrowed to the new facts, and earlier ones a new sighting gave another
    gh-pages run, with their provenance: the rows `touched_provenance` recomputed (a new fact comes
    with its sighting), any other looked up. Each view over the facts joins the provenance, and
    probing every fact's provenance for a few thousand new facts cost most of a second per key."""
    # By run_seq alone when no fact moved: the fact files' statistics then skip the earlier files.
    moved = duck.scalar(con, "select count(*) from reattributed_digest")
    new = f"where f.run_seq > {int(since_seq)}" + (f" or f.measurement_digest in ({MOVED_DIGESTS})" if moved else "")
    if not duck.scalar(con, "select count(*) from duckdb_tables() where temporary and table_name = 'new_fact_digest'"):
        con.execute(
            f"create or replace temp table new_fact_digest as "
            f"select measurement_digest from delta_fact_measurement f {new}"
        )
        con.execute(
            "create or replace temp table new_fact_provenance as "
            "select * from touched_provenance semi join new_fact_digest using (measurement_digest)"
        )
        if duck.scalar(con, f"select count(*) from {NO_NEW_PROVENANCE}"):
            con.execute(
                "insert into new_fact_provenance "
                f"select * from fact_provenance semi join {NO_NEW_PROVENANCE} using (measurement_digest)"
            )
    with narrowed(con, "delta_fact_measurement", new), narrowed(con, "fact_provenance", rows="new_fact_provenance"):
        yield


def merge_new_facts(
    con: duckdb.DuckDBPyConnection, model: SqlModel, definition: str, table: str, since_seq: int
) -> str:
    """``model``'s rows for the keys new facts touch, its rows over the new facts alone merged into
    the kept ones (`when_matched`: rows alike in every other column are one). Only when no
    earlier fact moved: the new facts are then exactly those of runs after ``since_seq``, and an
    incremental run never changes an earlier fact. Recomputing the touched partitions instead counts
    every fact of a touched version, or takes a median over every run of a touched step."""
    key, merge = list(model.header.partitioned_by), model.header.when_matched
    new, quoted = f"{model.name}__new", f'"{table}"'
    with _new_facts(con, since_seq):
        con.execute(f'create or replace temp table {new} as select * from "{definition}"')
    count = duck.scalar(con, f"select count(*) from {new}")
    if count:
        columns = [d[0] for d in con.execute(f"select * from {new} limit 0").description]
        grain = [f'"{c}"' for c in columns if c not in merge]
        merged = [f'{_merged(merge[c], c)} as "{c}"' for c in columns if c in merge]
        con.execute(f"""create or replace temp table {new}_merged as
            select {", ".join(grain + merged)} from (
                select * from {quoted} semi join {new} k on {_on(key, quoted)}
                union all by name select * from {new}
            ) group by all""")
        con.execute(f"delete from {quoted} where exists (select 1 from {new} k where {_on(key, quoted)})")
        con.execute(f"insert into {quoted} by name select * from {new}_merged")
        con.execute(f"drop table {new}_merged")
    con.execute(f"drop table {new}")
    return f"{count} key(s) (merged)" if count else "untouched"


def _merged(rule: str, column: str) -> str:
    """A `when_matched` rule as SQL: a function name applies to the column, else the expression."""
    return f'{rule}("{column}")' if rule.isidentifier() else rule


def _on(key: list[str], left: str, right: str = "k") -> str:
    """Equality on ``key`` with NULLs equal (x_value, extra_config may be NULL)."""
    return " and ".join(f"{right}.{c} is not distinct from {left}.{c}" for c in key)


@dataclass
class Touched:
    """The key values new facts touch, for one (source view, key), found once per build and used
    by every model refreshed on that key. A model row with key value K depends only on the
    source's rows with K (the `partitioned_by` promise), so recomputing the model over just
    those rows gives exactly its rows for the touched keys.
    Narrowed by the hash of the key at the source (`_source_narrowed`): for the facts themselves at the
    bottom (`delta_fact_measurement`), for a finer source on that view. Under a finer
    source the facts are narrowed as well, by the hash of the key columns the source takes
    unchanged from them (`fact_columns` in its header): a superset of the facts behind the touched
    rows (a collision only adds rows the key's semi join drops). Narrowing the facts there to
    exactly those behind the touched rows (a semi join on their digests, or on a hash of them)
    made DuckDB plan reference_measurements past its memory limit at scale; a filter on top
    of the fact view, or a correlated EXISTS, is not pushed down."""

    source: str
    key: list[str]
    keys: str  # temp table: the touched key values; `<keys>_key_hash`, `<keys>_fact_hash`: hash(key), hash(fact_key)
    fact_key: list[str]  # the key's columns the source takes unchanged from the facts
    count: int = 0
    steps: bool = False  # `<keys>_step_hash`, `<keys>_step_digest`: the touched steps' facts

    @classmethod
    def find(
        cls, con, source: str, key: list[str], fact_key: list[str], since_seq: int, n: int, known: list[Touched]
    ) -> Touched:
        """From a finer key already found on the same source (a projection), else from the facts."""
        finer = next((t for t in known if t.source == source and set(key) < set(t.key)), None)
        t = cls(source, key, f"touched_key_{n}", fact_key)
        if finer is not None:
            con.execute(f"create or replace temp table {t.keys} as select distinct {', '.join(key)} from {finer.keys}")
        else:
            with _new_facts(con, since_seq):
                con.execute(f"create or replace temp table {t.keys} as select distinct {', '.join(key)} from {source}")
        t.hash_keys(con)
        return t

    def hash_keys(self, con) -> None:
        """The count of the touched keys, and the hashes the narrowed views filter on."""
        self.count = duck.scalar(con, f"select count(*) from {self.keys}")
        con.execute(
            f"create or replace temp table {self.keys}_key_hash as "
            f"select distinct hash({', '.join(self.key)}) as h from {self.keys}"
        )
        if self.fact_key:
            con.execute(
                f"create or replace temp table {self.keys}_fact_hash as "
                f"select distinct hash({', '.join(self.fact_key)}) as h from {self.keys}"
            )

    def _source_narrowed(self, con, name: str):
        """The source's rows whose key hashes like a touched key's: a superset of the touched keys' rows
        (a collision adds rows of another key, which the insert's semi join on the key itself drops).
        An IN on one hash is planned with the few touched keys as the build side; a semi join on the
        key's columns was planned the other way round (the narrowed facts beneath are estimated at a
        few hundred rows) and hashed a million source rows on nine columns."""
        cols = ", ".join(f"f.{c}" for c in self.key)
        return narrowed(con, name, f"where hash({cols}) in (select h from {self.keys}_key_hash)")

    def find_steps(self, con, steps: FactSteps | None) -> None:
        """The versions and runs of the touched keys, when the key holds the source's step
        (``fact_steps`` in its header): the facts are then narrowed to the touched points at their
        touched versions (a hash of both) or runs, not to every step of a touched point."""
        if steps is None or not set(steps.columns) <= set(self.key):
            return
        con.execute(f"create or replace temp table touched as select * from {self.keys}")
        con.execute(f"create or replace temp table {self.keys}_step as {steps.sql}")
        con.execute(
            f"create or replace temp table {self.keys}_step_hash as "
            f"select distinct hash({', '.join(self.fact_key)}, liger_version) as h "
            f"from {self.keys}_step where liger_version is not null"
        )
        con.execute(
            f"create or replace temp table {self.keys}_step_digest as select distinct measurement_digest "
            f"from fact_provenance semi join {self.keys}_step s using (snapshot)"
        )
        con.execute("drop table touched")
        self.steps = True

    def _facts_narrowed(self, con, model: SqlModel, lookups: frozenset[str]):
        """delta_fact_measurement narrowed to the facts whose own columns hash like a touched key's
        (and, with ``steps``, of a touched step's version or run), for a model that reaches the facts
        through the source alone (its other inputs lookup tables)."""
        if not self.fact_key or set(model.header.depends_on) - {self.source} - lookups:
            return nullcontext()
        cols = ", ".join(f"f.{c}" for c in self.fact_key)
        where = f"where hash({cols}) in (select h from {self.keys}_fact_hash)"
        if self.steps:
            where += (
                f" and (hash({cols}, f.liger_version) in (select h from {self.keys}_step_hash)"
                f" or f.measurement_digest in (select measurement_digest from {self.keys}_step_digest))"
            )
        return narrowed(con, "delta_fact_measurement", where)

    def refresh(
        self, con, model: SqlModel, definition: str, table: str, finer_deps: list[str], lookups: frozenset[str]
    ) -> str:
        """Delete the model's rows for the touched keys and insert them again, computed over the
        source's rows for the touched keys only (when the model reads that source), and over the
        rows of ``finer_deps`` (models keyed on the same source by a key holding this one, refreshed
        before it) whose key hashes like a touched key's: their rows of key K come from the source's
        rows of K alone, so the promise that this model's rows of K read only those holds for them
        too, and a window over every series' steps is not run to keep a few."""
        if self.count == 0:
            return "untouched"
        quoted, narrowed_facts = f'"{table}"', False
        con.execute(f"delete from {quoted} where exists (select 1 from {self.keys} k where {_on(self.key, quoted)})")
        insert = (
            f'insert into "{table}" by name select d.* from "{definition}" d '
            f"semi join {self.keys} k on {_on(self.key, 'd')}"
        )
        with ExitStack() as stack:
            for dep in finer_deps:
                stack.enter_context(self._source_narrowed(con, dep))
            if self.source == "fact_measurement":
                stack.enter_context(self._source_narrowed(con, "delta_fact_measurement"))
            elif self.source in model.header.depends_on:
                facts = self._facts_narrowed(con, model, lookups)
                narrowed_facts = not isinstance(facts, nullcontext)
                stack.enter_context(facts)
                # facts narrowed to the touched steps leave the source little beyond the touched keys
                # (hashing its rows by the key cost more than it spared)
                if not (narrowed_facts and self.steps):
                    stack.enter_context(self._source_narrowed(con, self.source))
            con.execute(insert)
        return f"{self.count} key(s)" + (" (facts by step)" if self.steps and narrowed_facts else "")

    def drop(self, con) -> None:
        kept = ("key_hash", "fact_hash", "step", "step_hash", "step_digest")
        for table in (self.keys, *(f"{self.keys}_{t}" for t in kept)):
            con.execute(f"drop table if exists {table}")
