"""One SparkSession for the views: local[2] by default, any master or a Spark Connect URL by env var."""

from __future__ import annotations

import sys

from pipeline.config import default_env, load

__all__ = ["spark_session", "SPARK_CONF", "spark_master"]

# DuckDB's semantics where Spark has a choice: UTC wall clock (the warehouse's timestamps are UTC
# without zone), non-ANSI arithmetic (the transpiler already turns x/0, ln(0) and index errors into
# DuckDB's results; this covers what it cannot see, e.g. integer overflow in a sum), microsecond
# Parquet timestamps (not INT96) so DuckDB, Polars and Arrow read the output as written.
SPARK_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.ansi.enabled": "false",
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}

# Only for a local master: 2 cores here, a UI nobody opens, and no address but the loopback.
LOCAL_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum": "2",
    "spark.ui.showConsoleProgress": "false",
}


def spark_master() -> str:
    return load().spark_master


def spark_session(master: str | None = None, app_name: str = "liger-views", conf: dict[str, str] | None = None):
    """``sc://host:15002`` connects through Spark Connect; anything else is a classic master URL.
    ``conf``: further settings for a classic master, applied before the JVM starts."""
    from pyspark.sql import SparkSession

    master = master or spark_master()
    if master.startswith("local"):
        # Python workers run this interpreter (the project's venv), not whatever `python3` is on PATH.
        default_env(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    builder = SparkSession.builder.appName(app_name)
    if master.startswith("sc://"):
        builder = builder.remote(master)
    else:
        builder = builder.master(master)
        extra = LOCAL_CONF if master.startswith("local") else {}
        for key, value in {**extra, **(conf or {})}.items():
            builder = builder.config(key, value)
        for key, value in SPARK_CONF.items():
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # Through Spark Connect the session already exists on the server: these are runtime settings.
    for key, value in SPARK_CONF.items():
        spark.conf.set(key, value)
    if not master.startswith("sc://"):
        spark.sparkContext.setLogLevel("ERROR")
    return spark
