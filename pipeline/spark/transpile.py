"""sql/serve and sql/regress models (DuckDB dialect) -> Spark SQL, with DuckDB's semantics kept where sqlglot's do not.

sqlglot translates names and syntax; it does not keep what a function returns at the edges. Each
rewrite below fixes one difference that the parity test (tests/test_spark_parity.py) caught:

* ``len(list)``            sqlglot emits LENGTH, which Spark rejects on arrays -> SIZE.
* ``select * ... qualify``  Spark has no QUALIFY; sqlglot wraps it and the outer ``*`` leaks the
                            helper column ``_w`` -> the star is expanded to named columns first.
* ``epoch(ts)``             UNIX_TIMESTAMP drops sub-seconds -> UNIX_MICROS / 1e6 as DOUBLE.
* ``printf('%.3f', x)``     Java's formatter rounds the shortest decimal half-up; DuckDB rounds the
                            exact binary value half-even -> FORMAT_NUMBER (java DecimalFormat:
                            exact value, half-even), NULL if any argument is NULL (Java prints "null").
* ``list(x)``               COLLECT_LIST drops NULLs; DuckDB keeps them -> collect structs.
* ``flatten`` / ``list_distinct``  DuckDB skips NULL sub-lists / drops NULL elements; Spark returns
                            NULL / keeps one NULL -> filter NULLs first.
* ``quantile_cont``/``median``  PERCENTILE_CONT(x, q) is not Spark syntax -> PERCENTILE(x, q).
* ``a / b``, ``ln(x)``      DuckDB is IEEE (x/0 = inf, ln(0) = -inf, ln(-1) = NaN) and divides as
                            DOUBLE; Spark returns NULL (or fails under ANSI) and keeps DECIMAL.
* ``list[i]``               out of range is NULL in DuckDB, an error in ANSI Spark -> TRY_ELEMENT_AT.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB

__all__ = ["SparkView", "UnsupportedConstruct", "transpile_views", "transpile_model"]

ColumnsOf = Callable[[str], list[str] | None]


class _DuckDBAsWritten(DuckDB):
    """DuckDB, with ``list[i]`` kept 1-based in the tree: sqlglot shifts an index to 0-based only when
    it can type it as an integer (``xs[i]`` on an untyped column is left alone), so after parsing
    nobody can tell which happened. TRY_ELEMENT_AT is 1-based too."""

    INDEX_OFFSET = 0


class UnsupportedConstruct(ValueError):
    """A construct whose DuckDB meaning this layer cannot reproduce on Spark (see docs/spark.md)."""


@dataclass(frozen=True)
class SparkView:
    name: str
    query: str  # Spark SQL of the view's SELECT
    materialize: bool


def transpile_model(
    model, array_columns: Collection[str] = (), columns_of: ColumnsOf = lambda _name: None
) -> SparkView:
    """One SQL model (its MODEL header says whether it is materialized) as a Spark view."""
    sql = f"create or replace view {model.name} as\n{model.sql}"
    (view,) = transpile_views(sql, array_columns, columns_of, materialize=model.materialize)
    return view


def transpile_views(
    duckdb_sql: str,
    array_columns: Collection[str] = (),
    columns_of: ColumnsOf = lambda _name: None,
    materialize: bool = False,
) -> list[SparkView]:
    """Every ``create view`` of one view file, as Spark SQL.

    ``array_columns``: names of columns that are arrays in the relations the file reads (Spark's
    catalog knows; the SQL text does not). ``columns_of``: column names of a registered relation,
    used to expand ``select *`` before a QUALIFY is rewritten.
    """
    views = []
    for statement in sqlglot.parse(duckdb_sql, read=_DuckDBAsWritten):
        if statement is None:
            continue
        if not (isinstance(statement, exp.Create) and statement.kind == "VIEW"):
            raise UnsupportedConstruct(f"a view file may only create views, found: {statement.sql()[:80]}")
        name = statement.this.name
        query = statement.expression
        _rewrite(query, set(array_columns) | _array_aliases(query), columns_of)
        views.append(SparkView(name=name, query=query.sql(dialect="spark"), materialize=materialize))
    return views


# -- helpers ---------------------------------------------------------------------------------
def _spark(template: str, **parts: exp.Expression) -> exp.Expression:
    """A Spark SQL snippet with ``__name`` placeholders replaced by (already rewritten) expressions."""
    tree = sqlglot.parse_one(template, read="spark")
    for column in list(tree.find_all(exp.Column)):
        key = column.name
        if key.startswith("__") and key[2:] in parts and not column.table:
            column.replace(parts[key[2:]].copy())
    return tree


_ARRAY_EXPRESSIONS = (
    exp.ArrayAgg,
    exp.ArraySort,
    exp.ArrayDistinct,
    exp.Array,
    exp.Flatten,
    exp.Split,
    exp.ArrayConcat,
    exp.ArrayFilter,
    exp.ArraySlice,
)


def _is_array(node: exp.Expression, array_names: set[str]) -> bool:
    if isinstance(node, exp.Column):
        return node.name.lower() in array_names
    return isinstance(node, _ARRAY_EXPRESSIONS)


def _array_aliases(query: exp.Expression) -> set[str]:
    """Names the query itself gives to array-valued expressions (e.g. ``list_sort(list(x)) as xs``)."""
    return {alias.alias.lower() for alias in query.find_all(exp.Alias) if isinstance(alias.this, _ARRAY_EXPRESSIONS)}


def _projection_names(select: exp.Select) -> list[str] | None:
    names = []
    for projection in select.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and projection.is_star):
            return None
        names.append(projection.alias_or_name)
    return names


def _expand_qualify_star(select: exp.Select, columns_of: ColumnsOf) -> None:
    if not select.args.get("qualify") or _projection_names(select) is not None:
        return
    source = select.args.get("from_") or select.args.get("from")
    table = source.this if source else None
    if not isinstance(table, exp.Table) or select.args.get("joins"):
        raise UnsupportedConstruct("select * with QUALIFY must read one relation; name the columns")
    names = None
    for cte in select.root().find_all(exp.CTE):
        if cte.alias_or_name == table.name and isinstance(cte.this, exp.Select):
            names = _projection_names(cte.this)
    if names is None:
        names = columns_of(table.name)
    if names is None:
        raise UnsupportedConstruct(f"cannot expand select * from {table.name} before QUALIFY; name the columns")
    select.set("expressions", [exp.column(name) for name in names])


_FORMAT_SPEC = re.compile(r"%(%|s|d|\.(\d+)f)")


def _printf(node: exp.Anonymous) -> exp.Expression:
    fmt, *args = node.expressions
    text = _literal_text(fmt)
    if text is None:
        raise UnsupportedConstruct("printf needs a literal format string")
    pieces, arg_index, spark_args = [], 0, []
    position = 0
    for match in _FORMAT_SPEC.finditer(text):
        pieces.append(text[position : match.start()])
        position = match.end()
        if match.group(1) == "%":
            pieces.append("%%")
            continue
        arg = args[arg_index]
        arg_index += 1
        if match.group(2) is not None:
            pieces.append("%s")
            spark_args.append(_fixed_point(arg, int(match.group(2))))
        else:
            pieces.append("%" + match.group(1))
            spark_args.append(arg)
    rest = text[position:]
    if "%" in rest.replace("%%", "") or arg_index != len(args):
        raise UnsupportedConstruct(f"printf format {text!r}: only %s, %d, %.Nf and %% are portable")
    pieces.append(rest)
    call = exp.Anonymous(this="FORMAT_STRING", expressions=[exp.Literal.string("".join(pieces)), *spark_args])
    if not args:
        return call
    any_null = exp.or_(*[exp.Is(this=a.copy(), expression=exp.Null()) for a in args])
    return exp.Case(ifs=[exp.If(this=any_null, true=exp.Null())], default=call)


def _literal_text(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string:
        return node.this
    if isinstance(node, exp.DPipe):
        left, right = _literal_text(node.this), _literal_text(node.expression)
        return None if left is None or right is None else left + right
    if isinstance(node, exp.Paren):
        return _literal_text(node.this)
    return None


def _fixed_point(arg: exp.Expression, digits: int) -> exp.Expression:
    # DecimalFormat rounds the exact binary value half-even, as DuckDB's printf does.
    return _spark(
        "CASE WHEN ISNAN(CAST(__x AS DOUBLE)) THEN 'nan' "
        "WHEN CAST(__x AS DOUBLE) = CAST('Infinity' AS DOUBLE) THEN 'inf' "
        "WHEN CAST(__x AS DOUBLE) = CAST('-Infinity' AS DOUBLE) THEN '-inf' "
        f"ELSE REPLACE(FORMAT_NUMBER(CAST(__x AS DOUBLE), {digits}), ',', '') END",
        x=arg,
    )


def _rewrite_node(node: exp.Expression, array_names: set[str], columns_of: ColumnsOf) -> exp.Expression:
    if isinstance(node, exp.Select):
        _expand_qualify_star(node, columns_of)
        return node
    if isinstance(node, exp.TimeToUnix):
        return _spark("CAST(UNIX_MICROS(CAST(__ts AS TIMESTAMP)) AS DOUBLE) / 1000000.0D", ts=node.this)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "printf":
        return _printf(node)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "timezone":
        # timezone('UTC', tstz) = the UTC wall-clock time without zone; the session runs in UTC
        if _literal_text(node.expressions[0]) != "UTC":
            raise UnsupportedConstruct("timezone(zone, ts) is portable for 'UTC' only")
        return _spark("CAST(__ts AS TIMESTAMP_NTZ)", ts=node.expressions[1])
    if isinstance(node, exp.ArrayAgg):
        inner = node.this
        if isinstance(inner, exp.Distinct):
            return _spark("TRANSFORM(COLLECT_SET(NAMED_STRUCT('v', __x)), __e -> __e.v)", x=inner.expressions[0])
        if isinstance(inner, exp.Order):
            raise UnsupportedConstruct("list(x order by y): sort the list afterwards (list_sort)")
        return _spark("TRANSFORM(COLLECT_LIST(NAMED_STRUCT('v', __x)), __e -> __e.v)", x=inner)
    if isinstance(node, exp.Flatten):
        return _spark("FLATTEN(FILTER(__x, __e -> __e IS NOT NULL))", x=node.this)
    if isinstance(node, exp.ArrayDistinct):
        return _spark("ARRAY_DISTINCT(FILTER(__x, __e -> __e IS NOT NULL))", x=node.this)
    if isinstance(node, exp.PercentileCont):
        return exp.Anonymous(this="PERCENTILE", expressions=[node.this, node.expression])
    if isinstance(node, exp.Median):
        return exp.Anonymous(this="PERCENTILE", expressions=[node.this, exp.Literal.number("0.5")])
    if isinstance(node, exp.Div):
        if isinstance(node.expression, exp.Literal) and node.expression.is_number and float(node.expression.this) != 0:
            return _spark("CAST(__a AS DOUBLE) / CAST(__b AS DOUBLE)", a=node.this, b=node.expression)
        # POWER follows IEEE at zero (1/0 = inf, 1/-0 = -inf); the division keeps full precision elsewhere.
        return _spark(
            "CASE WHEN CAST(__b AS DOUBLE) = 0 THEN CAST(__a AS DOUBLE) * POWER(CAST(__b AS DOUBLE), -1) "
            "ELSE CAST(__a AS DOUBLE) / CAST(__b AS DOUBLE) END",
            a=node.this,
            b=node.expression,
        )
    if isinstance(node, exp.Ln):
        return _spark(
            "CASE WHEN __x = 0 THEN CAST('-Infinity' AS DOUBLE) WHEN __x < 0 THEN CAST('NaN' AS DOUBLE) "
            "ELSE LN(__x) END",
            x=node.this,
        )
    if (
        isinstance(node, exp.Bracket)
        and len(node.expressions) == 1
        and not (isinstance(node.expressions[0], exp.Literal) and node.expressions[0].is_string)
    ):
        return _spark(
            "CASE WHEN CAST(__i AS INT) = 0 THEN NULL ELSE TRY_ELEMENT_AT(__a, CAST(__i AS INT)) END",
            a=node.this,
            i=node.expressions[0],
        )
    return node


def _rewrite(query: exp.Expression, array_names: set[str], columns_of: ColumnsOf) -> None:
    """Bottom-up, so a rewritten node is built from already rewritten children."""
    # Array-ness is read off DuckDB's functions, so lengths are settled before those are rewritten.
    for node in list(query.find_all(exp.Length)):
        if _is_array(node.this, array_names):
            node.replace(exp.ArraySize(this=node.this))
    for node in reversed(list(query.dfs())):
        new = _rewrite_node(node, array_names, columns_of)
        if new is not node:
            node.replace(new)
