"""change_points on Spark: the same Python (PELT) per sweep, run where the sweep's rows are.

A sweep is small (one row per version pair) and independent of every other, so groupBy(sweep) +
applyInPandas runs pipeline.regress.change_points unchanged on the executors: the segmentation is
identical to the DuckDB build's by construction. Executors need numpy (it is in the project's
dependencies; a cluster image must carry them too).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pipeline.regress.change_points import (
    CHANGE_POINTS_DDL,
    PAIR_COLUMNS,
    SOURCE_SQL,
    SWEEP_KEY_COLUMNS,
    sweep_change_points,
)

__all__ = ["change_points_frame", "change_points_schema"]


def change_points_schema() -> str:
    """Spark DDL of the change_points table, derived from the DuckDB DDL (one definition)."""
    create = sqlglot.parse_one(CHANGE_POINTS_DDL, read="duckdb")
    columns = create.this.expressions
    return ", ".join(f"{c.name} {c.args['kind'].sql(dialect='spark')}" for c in columns if isinstance(c, exp.ColumnDef))


def _present(value):
    # pandas hands missing values over as NaN/NA/None depending on the dtype.
    try:
        import pandas as pd

        return None if pd.isna(value) else value
    except (TypeError, ValueError):
        return value


def change_points_frame(spark, penalty_factor: float, window: int = 0):
    """A DataFrame with the rows of DuckDB's ``change_points`` table, from the sweep rows of ``verdicts``."""
    import pandas as pd

    schema = change_points_schema()
    names = [part.split(" ", 1)[0] for part in schema.split(", ")]
    pair_columns = list(PAIR_COLUMNS)
    key_columns = list(SWEEP_KEY_COLUMNS)

    def per_sweep(sweep: pd.DataFrame) -> pd.DataFrame:
        sweep = sweep.sort_values("to_version_rank", kind="stable")
        key = [_present(v) for v in sweep.iloc[0][key_columns]]
        pairs = [[_present(v) for v in row] for row in sweep[pair_columns].itertuples(index=False, name=None)]
        pairs = [(p[0], p[1], int(p[2]), int(p[3]), *p[4:]) for p in pairs]
        rows = sweep_change_points(key, pairs, penalty_factor, window)
        return pd.DataFrame(rows, columns=names)

    source = spark.sql(SOURCE_SQL).select(*key_columns, *pair_columns)
    return source.groupBy(*key_columns).applyInPandas(per_sweep, schema=schema)
