"""The models of sql/serve and sql/regress on Apache Spark: DuckDB SQL transpiled by sqlglot, run by pyspark.

No Dagster imports. `python -m pipeline.spark` (make spark-views) materializes every view of the
current warehouse under `<warehouse>/spark/<view>.parquet`. What the views must avoid, and why, is in
docs/spark.md.
"""
