"""Helpers for the Spark/DuckDB parity test: perturbed warehouse tables and a tolerant row comparison."""

from __future__ import annotations

import math
import re
from pathlib import Path

import duckdb
import polars as pl

from pipeline.analyze.change_points import build_change_points
from pipeline.serve.duckdb_build import apply_views, create_table_views

REL_TOL = 1e-9

# Each perturbation is a set of rows derived from the shipped facts, so the views meet what a real
# warehouse can hold but the shipped history does not: every edge the views guard against.
PERTURBED_FACTS = """
with base as (select *, hash(measurement_digest) % 97 as h from read_parquet('{facts}')),
newest as (
    select * from base
    where liger_version = '0.8.0' and kernel_name in (select distinct kernel_name from base where h < 30)
),
edited as (
    select * replace (
        case when h % 11 = 0 then null else extra_config end as extra_config,
        case when h % 5 = 0 then observed_at + to_microseconds((h * 10007)::bigint) else observed_at end as observed_at,
        case when h % 13 = 0 then 'main' when h % 17 = 0 then null else liger_version end as liger_version,
        case when h % 19 = 0 then 0.0 when h % 23 = 0 then -p50 else p50 end as p50
    ) from base
),
exact_ties as (  -- same series, version and time: only the digest can order them
    select * replace (measurement_digest || '-tie' as measurement_digest, p50 * 1.01 as p50)
    from base where h % 7 = 1
),
reruns as (  -- the same version run again later, the same session (reference gap) and days later
    select * replace (
        measurement_digest || '-rerun' as measurement_digest,
        observed_at + interval 90 minute as observed_at,
        p50 * (1 + (h % 9) / 100.0) as p50
    ) from base where h % 3 = 0
    union all
    select * replace (
        measurement_digest || '-late' as measurement_digest,
        observed_at + interval 3 day as observed_at
    ) from base where h % 29 = 0
),
later_versions as (  -- two more releases so sweeps have >= 3 versions: liger moves, references do not
    select newest.* replace (
        measurement_digest || '-' || v.version as measurement_digest,
        v.version as liger_version,
        observed_at + to_days(v.days) as observed_at,
        case when starts_with(kernel_provider, 'liger') then p20 * v.factor else p20 end as p20,
        case when starts_with(kernel_provider, 'liger') then p50 * v.factor else p50 end as p50,
        case when starts_with(kernel_provider, 'liger') then p80 * v.factor else p80 end as p80
    )
    from newest
    cross join (values ('0.9.0', 30, 1.6), ('0.9.1', 60, 1.6), ('1.0.0.dev1', 90, 0.7)) as v(version, days, factor)
)
select * exclude (h) from edited
union all select * exclude (h) from exact_ties
union all select * exclude (h) from reruns
union all select * exclude (h) from later_versions
"""

EXTRA_QUARANTINE = """
select * from read_parquet('{quarantine}')
union all
select * from (values
    ('liger_csv/a.csv', 'line 3', 'short_row', 'x,y', 1),
    ('liger_csv/a.csv', 'line 9', 'short_row', 'x', 1),
    ('liger_csv/b.csv', 'line 2', 'non_positive_value', 'x,0,0,0', 1),
    (null, 'file', 'unreadable_file', null, 1)
) as q(source_file, location, reason, raw, run_seq)
"""


def write_perturbed_tables(files: dict[str, list[str]], dest: Path) -> dict[str, list[str]]:
    """The shipped warehouse's Delta snapshot files ({delta_<table>: [file]}), with the facts and
    the quarantine replaced by perturbed copies written as Parquet under ``dest``."""
    dest.mkdir(parents=True)
    out = dict(files)
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    try:
        for table, template, arg in (
            ("delta_fact_measurement", PERTURBED_FACTS, "facts"),
            ("delta_quarantine", EXTRA_QUARANTINE, "quarantine"),
        ):
            listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files[table]) or "''"
            target = dest / f"{table}.parquet"
            query = template.replace("read_parquet('{" + arg + "}')", f"read_parquet([{listed}])")
            if not files[table]:  # an empty table: only the extra rows
                query = query.replace(f"select * from read_parquet([{listed}])\nunion all\n", "")
            con.execute(f"copy ({query}) to '{target}' (format parquet)")
            out[table] = [str(target)]
    finally:
        con.close()
    return out


def build_duckdb_from_files(files: dict[str, list[str]], db: Path) -> None:
    """liger.duckdb over arbitrary table files, as the pipeline builds it (every view, change points)."""
    con = duckdb.connect(str(db))
    con.execute("set TimeZone = 'UTC'")
    try:
        create_table_views(con, {t.removeprefix("delta_"): f for t, f in files.items()})
        apply_views(con)
        build_change_points(con)
    finally:
        con.close()


def duckdb_rows(db: Path, view: str) -> pl.DataFrame:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return pl.from_arrow(con.sql(f'select * from "{view}"').arrow().read_all())
    finally:
        con.close()


def spark_rows(out_dir: Path, view: str) -> pl.DataFrame:
    con = duckdb.connect()
    try:
        return pl.from_arrow(
            con.sql(f"select * from read_parquet('{out_dir / (view + '.parquet')}/*.parquet')").arrow().read_all()
        )
    finally:
        con.close()


def _is_float(dtype: pl.DataType) -> bool:
    return dtype.is_float() or isinstance(dtype, pl.Decimal)


def _normalized(frame: pl.DataFrame, float_columns: set[str]) -> pl.DataFrame:
    exprs = []
    for name, dtype in frame.schema.items():
        column = pl.col(name)
        if name in float_columns:
            column = column.cast(pl.Float64)
        elif dtype.is_integer():
            column = column.cast(pl.Int64)
        elif isinstance(dtype, pl.Datetime):
            column = (
                column.dt.replace_time_zone(None).dt.cast_time_unit("us")
                if dtype.time_zone
                else column.dt.cast_time_unit("us")
            )
        exprs.append(column)
    frame = frame.select(exprs)
    # Sort as a multiset: exact columns first, floats rounded so 1e-15 noise cannot reorder rows.
    keys = [
        pl.col(n).round_sig_figs(8)
        if n in float_columns
        else pl.col(n).cast(pl.List(pl.String)).list.join("\x1f")
        if isinstance(frame.schema[n], pl.List)
        else pl.col(n)
        for n in frame.columns
    ]
    return frame.sort(keys, nulls_last=True)


def _same_float(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b))


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _same_text(a, b) -> bool:
    """Equal, or equal but for printed numbers one unit apart in their last digit: two engines sum
    in different orders, so a value 1e-16 from a rounding boundary may print either way."""
    if a == b or a is None or b is None:
        return a == b
    if _NUMBER.split(a) != _NUMBER.split(b):
        return False
    for x, y in zip(_NUMBER.finditer(a), _NUMBER.finditer(b), strict=True):
        decimals = len(x.group().partition(".")[2])
        if (
            decimals != len(y.group().partition(".")[2])
            or abs(float(x.group()) - float(y.group())) > 1.5 * 10**-decimals
        ):
            return False
    return True


def differences(view: str, duck: pl.DataFrame, spark: pl.DataFrame, limit: int = 5) -> list[str]:
    """Human-readable differences (empty when the two results are the same multiset of rows)."""
    if duck.columns != spark.columns:
        return [f"{view}: columns differ: duckdb {duck.columns} vs spark {spark.columns}"]
    if duck.height != spark.height:
        return [f"{view}: {duck.height} rows on duckdb vs {spark.height} on spark"]
    floats = {n for n in duck.columns if _is_float(duck.schema[n]) or _is_float(spark.schema[n])}
    duck, spark = _normalized(duck, floats), _normalized(spark, floats)
    found = []
    for name in duck.columns:
        left, right = duck[name].to_list(), spark[name].to_list()
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            same = _same_float(a, b) if name in floats else _same_text(a, b) if isinstance(a, str) else a == b
            if not same:
                found.append(f"{view}.{name} row {i}: duckdb {a!r} vs spark {b!r}")
                break
        if len(found) >= limit:
            break
    return found
