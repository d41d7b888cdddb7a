"""Run the sql/serve and sql/regress models on Spark through the model engine (`SparkTarget`), and
write each analysis model's rows as Parquet."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import duckdb
import pyarrow as pa

from pipeline.contracts.tables import SCHEMAS
from pipeline.engine import PythonModel, SqlModel, run_models
from pipeline.engine.catalog import regress_models, serve_models
from pipeline.regress.settings import RegressionSettings, write_freshness_table, write_settings_table
from pipeline.regress.versions import write_version_order_table
from pipeline.serve.duckdb_build import write_commit_kernel_table

from .change_points import change_points_frame
from .transpile import transpile_model

__all__ = ["SparkTarget", "register_inputs", "register_python_tables", "run_views"]


def register_inputs(spark, inputs: Mapping[str, Sequence[str]]) -> None:
    """Each Delta table as a temp view over its snapshot's Parquet files (paths or object-store
    URIs); a table with no file yet is an empty frame of its Delta schema."""
    for table, files in inputs.items():
        if files:
            frame = spark.read.parquet(*files)
        else:
            schema = SCHEMAS[table.removeprefix("delta_")]
            frame = spark.createDataFrame(schema.empty_table().to_pandas(), schema=_spark_schema(schema))
        frame.createOrReplaceTempView(table)


def _spark_schema(schema):
    from pyspark.sql import types as T

    kinds = {
        "string": T.StringType(),
        "int64": T.LongType(),
        "double": T.DoubleType(),
        "bool": T.BooleanType(),
        "list<item: string>": T.ArrayType(T.StringType()),
    }
    return T.StructType([T.StructField(f.name, kinds.get(str(f.type), T.TimestampType())) for f in schema])


def register_python_tables(spark, settings: RegressionSettings) -> None:
    """regression_settings and liger_version_order, made by the same Python as the DuckDB build.

    The code writes them into an in-memory DuckDB; Arrow carries them to Spark unchanged (column
    names and types included). Versions are few (distinct strings), so collecting them is cheap.
    """
    facts = spark.table("delta_fact_measurement")
    versions = [r[0] for r in facts.select("liger_version").distinct().collect()]
    kernels = [r[0] for r in facts.select("kernel_name").distinct().collect()]
    changes = [
        tuple(r)
        for r in spark.table("delta_commit_change").select("commit", "kernel_paths", "harness_changes").collect()
    ]
    con = duckdb.connect()
    try:
        write_settings_table(con, settings)
        write_freshness_table(con)
        write_version_order_table(con, versions)
        con.register("delta_fact_measurement", pa.table({"kernel_name": pa.array(kernels, pa.string())}))

        def lists(i: int) -> pa.Array:
            return pa.array([list(r[i] or ()) for r in changes], pa.list_(pa.string()))

        con.register(
            "delta_commit_change",
            pa.table(
                {
                    "commit": pa.array([r[0] for r in changes], pa.string()),
                    "kernel_paths": lists(1),
                    "harness_changes": lists(2),
                }
            ),
        )
        write_commit_kernel_table(con)
        tables = ("regression_settings", "liger_version_order", "commit_kernel", "commit_harness", "freshness_settings")
        for table in tables:
            rows = con.table(table).arrow().read_all()
            if rows.num_rows == 0:  # no chunks at all, which pyspark cannot convert: one empty chunk
                rows = pa.table({f.name: pa.array([], f.type) for f in rows.schema})
            spark.createDataFrame(rows).createOrReplaceTempView(table)
    finally:
        con.close()


class _Catalog:
    """Column names and array columns of every registered relation, kept as views are added
    (asking Spark's catalog per file costs an analysis per relation)."""

    def __init__(self, spark):
        self.spark = spark
        self.columns: dict[str, list[str]] = {}
        self.array_columns: set[str] = set()
        for table in spark.catalog.listTables():
            self.add(table.name, spark.table(table.name))

    def add(self, name: str, frame) -> None:
        from pyspark.sql.types import ArrayType

        self.columns[name.lower()] = frame.columns
        self.array_columns |= {f.name.lower() for f in frame.schema.fields if isinstance(f.dataType, ArrayType)}

    def columns_of(self, name: str) -> list[str] | None:
        return self.columns.get(name.lower())


class SparkTarget:
    """The engine's target on Spark: a model is transpiled (transpile.py) and registered as a temp
    view; with ``out``, its rows are written to ``out/<name>.parquet`` first and every model, view or
    table, is read back from them: the rows are computed already, and a view re-planned under each
    later model made Spark compute it again for every reader (the parity run took twice as long)."""

    def __init__(self, catalog: _Catalog, out: str | None = None, log: Callable[[str], None] = lambda _m: None):
        self.catalog, self.out, self.log = catalog, out, log
        self.seconds: dict[str, float] = {}

    def _make(self, model: SqlModel) -> None:
        spark, started = self.catalog.spark, time.perf_counter()
        view = transpile_model(model, self.catalog.array_columns, self.catalog.columns_of)
        frame = spark.sql(view.query)
        if self.out is not None:
            target = f"{self.out}/{view.name}.parquet"
            frame.write.mode("overwrite").parquet(target)
            # the schema is known: given, the read skips the job that would infer it from the footers
            frame = spark.read.schema(frame.schema).parquet(target)
            self.seconds[view.name] = time.perf_counter() - started
            self.log(f"{view.name}: {self.seconds[view.name]:.1f} s")
        frame.createOrReplaceTempView(view.name)
        self.catalog.add(view.name, frame)

    def view(self, model: SqlModel, sql: str) -> None:
        self._make(model)

    def table(self, model: SqlModel, sql: str) -> None:
        self._make(model)

    def python(self, model: PythonModel) -> None:
        model.run(self.catalog.spark)

    def given(self, model, relation: str) -> None:
        frame = self.catalog.spark.table(relation)
        frame.createOrReplaceTempView(model.name)
        self.catalog.add(model.name, frame)


def run_views(
    spark,
    inputs: Mapping[str, Sequence[str]],
    out_dir: str,
    settings: RegressionSettings | None = None,
    log: Callable[[str], None] = lambda _msg: None,
) -> dict[str, float]:
    """Materialize every regression model (sql/regress, dependency order) and change_points to
    ``out_dir/<view>.parquet``; the readers' tables of sql/serve are views, not written. Returns
    seconds per view."""
    settings = settings or RegressionSettings()
    out = out_dir.rstrip("/")
    register_inputs(spark, inputs)
    catalog = _Catalog(spark)
    register_python_tables(spark, settings)
    run_models(serve_models(), SparkTarget(catalog))
    target = SparkTarget(catalog, out, log)
    run_models(regress_models(), target)
    seconds = target.seconds
    started = time.perf_counter()
    change_points_frame(spark, settings.change_point_penalty, settings.change_point_window).write.mode(
        "overwrite"
    ).parquet(f"{out}/change_points.parquet")
    seconds["change_points"] = time.perf_counter() - started
    log(f"change_points: {seconds['change_points']:.1f} s")
    return seconds
