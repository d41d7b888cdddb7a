"""Every SQL model declares exactly what it reads, and the loader orders and refuses by those
declarations (never by file name)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from pipeline.config import SQL_DIR
from pipeline.engine import ModelError, ModelHeader, PythonModel, load_models, order_models, read_model
from pipeline.engine.catalog import regress_models, serve_models
from pipeline.model.run import models as normalize_models

FOLDERS = ("model", "serve", "regress", "checks")


def tables_read(sql: str) -> set[str]:
    sql = sql.replace("{measurement_digest}", "'x'").replace("{record_only_extra_config}", "'x'")
    sql = sql.replace("{fold_heuristic}", "true")
    read, ctes = set(), set()
    for statement in sqlglot.parse(sql, read="duckdb"):
        if statement is None:
            continue
        ctes |= {c.alias_or_name for c in statement.find_all(exp.CTE)}
        read |= {t.name for t in statement.find_all(exp.Table) if t.name}
    return read - ctes


@pytest.mark.parametrize("path", sorted(p for f in FOLDERS for p in (SQL_DIR / f).rglob("*.sql")), ids=str)
def test_header_declares_exactly_what_the_sql_reads(path: Path):
    model = read_model(path)
    read = tables_read(model.sql) - set(model.header.creates) - {model.name}
    assert read == set(model.header.depends_on), f"{path.name}: reads {sorted(read)}"


def test_every_folder_loads_in_dependency_order():
    for ordered in (normalize_models(), serve_models(), regress_models()):
        seen: set[str] = set()
        creates = {t for m in ordered for t in m.header.creates}
        for m in ordered:
            assert not (set(m.header.depends_on) & creates) - seen, f"{m.name} runs before its inputs"
            seen |= set(m.header.creates)


def test_the_python_step_runs_between_its_sql_neighbours():
    names = [m.name for m in normalize_models()]
    assert names.index("derived_dimensions") < names.index("derived_objects") < names.index("dimensions")


def _model(name: str, deps=(), creates=()) -> PythonModel:
    return PythonModel(ModelHeader(name=name, depends_on=deps, creates=creates), run=lambda con: None)


def test_unknown_dependency_and_cycle_and_double_creator_are_refused():
    with pytest.raises(ModelError, match="no model creates"):
        order_models([_model("a", deps=("nowhere",))])
    with pytest.raises(ModelError, match="cycle"):
        order_models([_model("a", deps=("b",)), _model("b", deps=("a",))])
    with pytest.raises(ModelError, match="created by both"):
        order_models([_model("a", creates=("t",)), _model("b", creates=("t",))])
    assert [m.name for m in order_models([_model("z", deps=("a",)), _model("a")])] == ["a", "z"]


def test_a_file_without_its_header_or_with_a_wrong_name_is_refused(tmp_path: Path):
    (tmp_path / "plain.sql").write_text("select 1\n")
    with pytest.raises(ModelError, match="starts with"):
        load_models(tmp_path)
    (tmp_path / "plain.sql").write_text("/* MODEL\nname: other\n*/\nselect 1\n")
    with pytest.raises(ModelError, match="differs from the file name"):
        load_models(tmp_path)
    (tmp_path / "plain.sql").write_text("/* MODEL\nname: plain\nmaterialised: table\n*/\nselect 1\n")
    with pytest.raises(ModelError, match="bad header"):
        load_models(tmp_path)


def _reads(name: str, by_name: dict) -> set[str]:
    """Every relation the model ``name`` reads, directly or through other models."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        for dep in by_name[todo.pop()].header.depends_on:
            if dep not in seen:
                seen.add(dep)
                todo += [dep] if dep in by_name else []
    return seen


def test_a_partition_key_is_columns_of_its_source_and_of_the_model(shipped_warehouse):
    """The refresh finds touched keys in the key's source, narrows that source by the key's columns
    and deletes the model's rows by the same columns: the source and the model must both hold every
    key column, and the model must read the source."""
    import duckdb

    by_name = {m.name: m for m in (*serve_models(), *regress_models())}
    keyed = [m for m in by_name.values() if m.header.partitioned_by]
    assert {m.name for m in keyed} >= {"series_steps", "reference_measurements", "step_changes", "sweep_points"}
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        columns = lambda rel: {r[0] for r in con.execute(f"describe {rel}").fetchall()}  # noqa: E731
        for m in keyed:
            key, source = set(m.header.partitioned_by), m.header.partitions_from
            assert source in _reads(m.name, by_name), (m.name, source)
            assert key <= columns(source), (m.name, key - columns(source))
            assert key <= columns(m.name), (m.name, key - columns(m.name))
            assert set(m.header.when_matched) <= columns(m.name), (m.name, m.header.when_matched)


def test_a_merge_without_a_key_of_a_key_column_or_by_a_function_that_does_not_merge_itself_is_refused(
    tmp_path: Path,
):
    header = "/* MODEL\nname: counts\nkind: INCREMENTAL_BY_PARTITION\ngrain: [k]\n{}\n*/\nselect 1\n"
    for body, reason in (
        ("when_matched: {n: sum}", "needs partitioned_by"),
        ("partitioned_by: [k]\nwhen_matched: {k: max}", "names a partition column"),
        ("partitioned_by: [k]\nwhen_matched: {n: median}", "does not merge itself"),
        ("partitioned_by: [k]\nwhen_matched: {n: [sum]}", "bad header"),
    ):
        (tmp_path / "counts.sql").write_text(header.format(body))
        with pytest.raises(ModelError, match=reason):
            load_models(tmp_path)
    merges = "{n: sum, p50: 'list_median(flatten(list(p50_runs)))'}"
    (tmp_path / "counts.sql").write_text(
        header.format(f"partitioned_by: [k]\npartitions_from: series_steps\nwhen_matched: {merges}")
    )
    merged = load_models(tmp_path)[0].header.when_matched
    assert merged == {"n": "sum", "p50": "list_median(flatten(list(p50_runs)))"}


def _passes_through(model, column: str, schema: dict) -> str | None:
    """The relation ``model``'s column ``column`` is copied from, unchanged and under the same
    name (every step of its lineage a bare column), else None."""
    from sqlglot.lineage import lineage

    node = lineage(column, model.sql, schema=schema, dialect="duckdb")
    sources = set()
    for n in node.walk():
        expression = n.expression.unalias() if isinstance(n.expression, exp.Alias) else n.expression
        if n.downstream and not isinstance(expression, exp.Column):
            return None
        if not n.downstream:
            table, _, name = n.name.rpartition(".")
            if name != column:
                return None
            sources.add(n.source.name if isinstance(n.source, exp.Table) else table)
    return sources.pop() if len(sources) == 1 else None


def test_fact_columns_are_the_facts_own_columns_unchanged(shipped_warehouse):
    """`fact_columns` lets the refresh narrow the facts by those columns beneath a view: each must
    come from delta_fact_measurement's column of that name through bare column references only
    (model after model: ranked_measurements -> measurements -> fact_measurement -> the facts)."""
    import duckdb

    by_name = {m.name: m for m in (*serve_models(), *regress_models())}
    declared = [m for m in by_name.values() if m.header.fact_columns]
    assert {m.name for m in declared} >= {"ranked_measurements", "measurement_steps"}
    schema: dict[str, dict[str, str]] = {}
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        for table, column in con.execute(
            "select table_name, column_name from duckdb_columns() where schema_name = 'internal'"
        ).fetchall():
            schema.setdefault(table, {})[column] = "varchar"
    for m in declared:
        for column in m.header.fact_columns:
            relation, model = m.name, m
            while relation in by_name:
                model = by_name[relation]
                relation = _passes_through(model, column, schema)
                assert relation is not None, f"{m.name}.{column} is not {model.name}'s input column unchanged"
            assert relation == "delta_fact_measurement", (m.name, column, relation)


def test_fact_steps_give_every_fact_of_a_step(shipped_warehouse):
    """`fact_steps` lets the refresh narrow the facts to the touched steps' versions and runs: for
    each step of the view on the shipped data, every fact behind its rows there must be of one of
    the versions or runs the query gives, and some step must leave facts out (it narrows)."""
    import duckdb

    declared = [m for m in (*serve_models(), *regress_models()) if m.header.fact_steps]
    assert {m.name for m in declared} == {"ranked_measurements", "measurement_steps"}
    with duckdb.connect(str(shipped_warehouse / "liger.duckdb"), read_only=True) as con:
        con.execute("use internal")
        facts = con.execute("select count(*) from delta_fact_measurement").fetchone()[0]
        for m in declared:
            columns = m.header.fact_steps.columns
            cols, at_step = ", ".join(columns), " and ".join(f"{c} = ?" for c in columns)
            steps = con.execute(f"select distinct {cols} from {m.name}").fetchall()
            assert len(steps) > 10, m.name
            narrowest = facts
            for step in steps:
                con.execute(
                    f"create or replace temp table touched as select distinct {cols} from {m.name} where {at_step}",
                    list(step),
                )
                con.execute(f"create or replace temp table steps as {m.header.fact_steps.sql}")
                kept = """(liger_version in (select liger_version from steps)
                    or measurement_digest in (select measurement_digest from fact_provenance
                                              semi join steps using (snapshot)))"""
                missed = con.execute(
                    f"select count(*) from {m.name} where {at_step} and not {kept}", list(step)
                ).fetchone()[0]
                assert missed == 0, (m.name, step, missed)
                narrowest = min(
                    narrowest, con.execute(f"select count(*) from delta_fact_measurement where {kept}").fetchone()[0]
                )
            assert narrowest < facts / 4, (m.name, narrowest, facts)


@pytest.mark.parametrize("path", sorted(p for f in FOLDERS for p in (SQL_DIR / f).rglob("*.sql")), ids=str)
def test_every_model_declares_its_kind_and_grain(path: Path):
    declared = read_model(path).header
    assert declared.kind and declared.grain, f"{path.name}: kind {declared.kind!r}, grain {declared.grain!r}"


def test_a_header_without_kind_or_grain_is_refused(tmp_path: Path):
    for missing, header in (("kind", "grain: [a]"), ("grain", "kind: VIEW")):
        path = tmp_path / "m.sql"
        path.write_text(f"/* MODEL\nname: m\n{header}\n*/\nselect 1 as a")
        with pytest.raises(ModelError, match=f"must declare {missing}"):
            read_model(path)
