"""Helpers for the regression-detection tests (not a conftest: import explicitly).

* ``build_scratch_warehouse(path)`` builds a DuckDB with a ``measurements``
  table straight from ``data_raw/liger_csv`` and the regression layer on top
  (the same steps the core DuckDB asset runs: version order table, settings
  table, every non-``00_`` SQL view file in lexical order, change points).
* ``regression_warehouse(tmp_dir)`` picks the DuckDB the tests read: the one
  named by ``LIGER_REGRESSION_TEST_DB``, a scratch build when
  ``LIGER_REGRESSION_TEST_SOURCE=scratch``, else (None) the real warehouse that
  the core pipeline builds from the shipped data.
* the synthetic-shift precision/recall benchmark lives in
  ``bench/regression_detection.py`` (it reuses ``build_regression_layer``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb

from pipeline.analyze.change_points import build_change_points
from pipeline.analyze.settings import RegressionSettings, write_settings_table
from pipeline.analyze.versions import write_version_order_table
from pipeline.serve.duckdb_build import create_view, serve_models, view_files

REPO = Path(__file__).resolve().parents[1]

CSV_GLOB = str(REPO / "data_raw" / "liger_csv" / "*.csv")

SCRATCH_MEASUREMENTS_SQL = """
create or replace table measurements as
with src as (
    select * from read_csv(?, all_varchar=true, union_by_name=true)
)
select distinct on (
    kernel_name, kernel_provider, kernel_operation_mode, metric_name, x_name, x_value,
    extra_benchmark_config_str, gpu_name, timestamp, liger_version
)
    sha256(concat_ws('|', kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        x_name, x_value, extra_benchmark_config_str, gpu_name, timestamp, liger_version))
        as measurement_digest,
    kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit, gpu_name,
    x_name, x_label, x_value, extra_benchmark_config_str as extra_config, liger_version,
    timestamp::timestamp as observed_at,
    y_value_20::double as p20, y_value_50::double as p50, y_value_80::double as p80,
    1::bigint as source_count
from src
"""

REGRESSION_VIEWS = (
    "measurements",
    "liger_versions",
    "ranked_measurements",
    "series_versions",
    "version_changes",
    "noise_floor",
    "reference_measurements",
    "point_pairs",
    "sweep_versions",
    "sweep_pairs",
    "verdicts",
    "regressions",
    "sweep_regressions",
    "version_coverage",
)


def regression_view_files() -> list:
    """The models of the regression layer (`measurements` first, then sql/analyze), in run order."""
    measurements = next(m for m in serve_models() if m.name == "measurements")
    return [measurements, *view_files()]


def build_regression_layer(con, settings: RegressionSettings | None = None) -> dict[str, float]:
    """Run the regression layer on a connection that has a ``measurements`` table.

    The table becomes ``fact_measurement`` (the name the real build reads), so
    the `measurements` model adds ``x_numeric`` and ``version_rank`` exactly as in
    the pipeline; columns a copied ``measurements`` view already derived are dropped.
    """
    t0 = time.perf_counter()
    con.execute("alter table measurements rename to fact_measurement")
    columns = {r[0] for r in con.execute("describe fact_measurement").fetchall()}
    for derived in ("x_numeric", "version_rank"):
        if derived in columns:
            con.execute(f"alter table fact_measurement drop column {derived}")
    versions = [r[0] for r in con.execute("select distinct liger_version from fact_measurement").fetchall()]
    write_version_order_table(con, versions)
    write_settings_table(con, settings or RegressionSettings())
    for model in regression_view_files():
        create_view(con, model.name, model)
    t1 = time.perf_counter()
    build_change_points(con)
    t2 = time.perf_counter()
    return {"views_seconds": t1 - t0, "change_points_seconds": t2 - t1}


def build_scratch_warehouse(path: Path, settings: RegressionSettings | None = None) -> dict[str, float]:
    with duckdb.connect(str(path)) as con:
        con.execute(SCRATCH_MEASUREMENTS_SQL, [CSV_GLOB])
        return build_regression_layer(con, settings)


def regression_warehouse(tmp_dir: Path) -> Path | None:
    """``LIGER_REGRESSION_TEST_DB`` if set; a scratch build from the CSVs if
    ``LIGER_REGRESSION_TEST_SOURCE=scratch``; else None: use the real pipeline's warehouse
    (the ``shipped_warehouse`` fixture of tests/conftest.py)."""
    env = os.environ.get("LIGER_REGRESSION_TEST_DB")
    if env:
        return Path(env)
    if os.environ.get("LIGER_REGRESSION_TEST_SOURCE") == "scratch":
        path = tmp_dir / "scratch.duckdb"
        build_scratch_warehouse(path)
        return path
    return None
