"""Per-view wall time of the sql/serve and sql/regress models on DuckDB (the build's path) vs Spark local[2]
(pipeline.spark).

    python -m bench.spark_views --sizes 100k 1m     # writes bench/results/spark_views.md

Each size: synthetic inputs (bench.generate) -> `dg launch` (the real pipeline) -> the current
published Delta snapshot's files are read by both engines. DuckDB: views applied in file order, materialized as
the build does, one file timed at a time. Spark: run_views (writes every view's Parquet).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import time
from pathlib import Path

import duckdb

from bench.generate import generate
from bench.run import SIZES, run_pipeline
from pipeline.engine import create_view
from pipeline.engine.catalog import regress_models
from pipeline.regress.change_points import build_change_points
from pipeline.serve.duckdb_build import create_table_views
from pipeline.spark.inputs import table_files
from pipeline.spark.session import spark_session
from pipeline.spark.views import run_views
from pipeline.store.warehouse import Warehouse

PROJECT = Path(__file__).resolve().parents[1]


def duckdb_view_seconds(inputs: dict[str, list[str]], temp: Path) -> tuple[dict[str, float], dict[str, int]]:
    con = duckdb.connect(config={"temp_directory": str(temp), "memory_limit": "3GB"})
    con.execute("set TimeZone = 'UTC'")
    create_table_views(con, {t.removeprefix("delta_"): f for t, f in inputs.items()})
    seconds, rows = {}, {}
    for vf in regress_models():
        name = vf.name
        started = time.perf_counter()
        create_view(con, name, vf.sql)
        if vf.materialize:  # as the build stores it
            con.execute(f'create table "{name}__materialized" as select * from "{name}"')
            con.execute(f'create or replace view "{name}" as select * from "{name}__materialized"')
        else:  # a plain view costs nothing until read: time one full read, as Spark writes it
            con.execute(f"select count(*) from (select * from {name})").fetchall()
        seconds[name] = time.perf_counter() - started
        rows[name] = con.execute(f"select count(*) from {name}").fetchall()[0][0]
    started = time.perf_counter()
    rows["change_points"] = build_change_points(con)
    seconds["change_points"] = time.perf_counter() - started
    con.close()
    return seconds, rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=["100k", "1m"])
    ap.add_argument("--work", default=str(PROJECT / "bench" / "work" / "spark_views"))
    args = ap.parse_args()
    work = Path(args.work)
    lines = []
    spark = spark_session("local[2]", app_name="liger-bench")
    try:
        for label in args.sizes:
            csv_rows, bundles = SIZES[label]
            case = work / label
            shutil.rmtree(case, ignore_errors=True)
            generate(case / "data_raw", csv_rows=csv_rows, bundles=bundles, seed=42)
            run_pipeline(case / "data_raw", case / "warehouse", case / "dagster_home")
            inputs = table_files(Warehouse(case / "warehouse"))
            duck_s, rows = duckdb_view_seconds(inputs, case / "tmp")
            spark_s = run_views(spark, inputs, str(case / "spark"))
            facts = rows["measurements"]
            for view in duck_s:
                lines.append(
                    f"| {label} | {facts:,} | {view} | {rows[view]:,} | {duck_s[view]:.2f} | {spark_s[view]:.2f} "
                    f"| {1e6 * duck_s[view] / facts:.2f} | {1e6 * spark_s[view] / facts:.2f} |"
                )
            lines.append(
                f"| {label} | {facts:,} | **total** | | {sum(duck_s.values()):.2f} | {sum(spark_s.values()):.2f} "
                f"| {1e6 * sum(duck_s.values()) / facts:.2f} | {1e6 * sum(spark_s.values()) / facts:.2f} |"
            )
            print("\n".join(lines[-len(duck_s) - 1 :]), flush=True)
    finally:
        spark.stop()
    out = PROJECT / "bench" / "results" / "spark_views.md"
    out.write_text(
        f"# Views: DuckDB vs Spark local[2] ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})\n\n"
        f"Machine: {platform.machine()}, 2 cores, Python {platform.python_version()}, duckdb {duckdb.__version__}; "
        "the machine was shared with other test runs (load average > 2), so read the figures as upper bounds.\n\n"
        "| size | facts | view | rows | duckdb s | spark s | duckdb µs/fact | spark µs/fact |\n"
        "|---|---:|---|---:|---:|---:|---:|---:|\n" + "\n".join(lines) + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
