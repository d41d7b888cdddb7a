"""make spark-views: every view of the current warehouse on Spark, written to <warehouse>/spark/."""

from __future__ import annotations

import sys

from pipeline.config import warehouse_dir, warehouse_uri
from pipeline.store.warehouse import Warehouse

from .inputs import table_files
from .session import spark_master, spark_session
from .views import run_views


def main() -> int:
    warehouse = warehouse_dir()
    inputs = table_files(Warehouse(warehouse_uri(), warehouse))
    out = warehouse / "spark"
    print(f"spark master: {spark_master()}; writing to {out}", flush=True)
    spark = spark_session()
    try:
        seconds = run_views(spark, inputs, str(out), log=lambda msg: print(msg, flush=True))
    finally:
        spark.stop()
    print(f"{len(seconds)} views in {sum(seconds.values()):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
