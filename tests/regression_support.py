"""Helpers for the regression-detection tests (not a conftest: import explicitly).

* ``build_scratch_warehouse(path)`` builds a DuckDB with a ``measurements``
  table straight from ``data_raw/liger_csv`` and the regression layer on top
  (the same steps the core DuckDB asset runs: version order table, settings
  table, every non-``00_`` SQL view file in lexical order, change points).
* ``regression_warehouse(tmp_dir)`` picks the DuckDB the tests read: the one
  named by ``LIGER_REGRESSION_TEST_DB``, a scratch build when
  ``LIGER_REGRESSION_TEST_SOURCE=scratch``, else (None) the real warehouse that
  the core pipeline builds from the shipped data.
* ``detection_benchmark(base_db)`` injects synthetic shifts into real series
  and measures precision/recall of the verdicts.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.core.change_points import build_change_points
from pipeline.core.regression_settings import RegressionSettings, write_settings_table
from pipeline.core.versions import parse_version, write_version_order_table

REPO = Path(__file__).resolve().parents[1]
VIEWS_DIR = REPO / "sql" / "views"
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

# every view file but the quarantine summary (these test warehouses have no quarantine table)
NOT_REGRESSION_FILES = ("01_quarantine_by_reason.sql",)


def regression_view_files() -> list[Path]:
    """The SQL files of the regression layer (00_measurements included), in run order."""
    return [p for p in sorted(VIEWS_DIR.glob("*.sql")) if p.name not in NOT_REGRESSION_FILES]


def build_regression_layer(con, settings: RegressionSettings | None = None) -> dict[str, float]:
    """Run the regression layer on a connection that has a ``measurements`` table.

    The table becomes ``fact_measurement`` (the name the real build reads), so
    ``00_measurements.sql`` adds ``x_numeric`` and ``version_rank`` exactly as in
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
    for path in regression_view_files():
        con.execute(path.read_text())
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


# --------------------------------------------------------------------------- synthetic shifts

SHIFTS = (0.02, 0.05, 0.10, 0.50)
SYNTHETIC_SUFFIX = ".post9999"

_COPY_SQL = """
create or replace table measurements as
with base as (select * from base_measurements),
ranked as (
    select
        *,
        row_number() over (
            partition by kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, x_value, extra_config, liger_version
            order by observed_at desc, measurement_digest desc
        ) as run_recency
    from base
),
copies as (
    select
        sha256(measurement_digest || '|synthetic') as measurement_digest,
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
        gpu_name, x_name, x_label, x_value, extra_config,
        liger_version || ? as liger_version,
        observed_at + interval 1000 days as observed_at,
        p20 * factor as p20, p50 * factor as p50, p80 * factor as p80,
        source_count
    from (
        select
            *,
            case when starts_with(kernel_provider, 'liger') then ? else ? end as factor
        from ranked
        where run_recency = ? and list_contains(?, liger_version)
    )
)
select * exclude (run_recency) from ranked
union all
select * from copies
"""


@dataclass
class Scenario:
    pool: str  # 'rerun': the copied "new version" is an earlier real re-run; 'copy': the latest run
    shift: float
    reference_shifted: bool


def _build_synthetic(base_db: Path, scenario: Scenario, settings: RegressionSettings | None):
    con = duckdb.connect()
    con.execute(f"attach '{base_db}' as src (read_only)")
    con.execute(
        "create table base_measurements as select measurement_digest, kernel_name, kernel_provider,"
        " kernel_operation_mode, metric_name, metric_unit, gpu_name, x_name, x_label, x_value,"
        " extra_config, liger_version, observed_at, p20, p50, p80, source_count"
        " from src.measurements"
    )
    con.execute("detach src")
    versions = [r[0] for r in con.execute("select distinct liger_version from base_measurements").fetchall()]
    # plain releases only: X.Y.Z + '.post9999' sorts right after X.Y.Z and before the next one
    plain = [v for v in versions if (pv := parse_version(v)) is not None and not (pv.pre or pv.post or pv.dev or pv.local)]
    factor = 1.0 + scenario.shift
    con.execute(
        _COPY_SQL,
        [
            SYNTHETIC_SUFFIX,
            factor,
            factor if scenario.reference_shifted else 1.0,
            2 if scenario.pool == "rerun" else 1,
            plain,
        ],
    )
    build_regression_layer(con, settings)
    return con


_POINT_ROWS = f"""
select verdict, bands_separated, reference_count > 0 as has_reference,
       abs(ln(ratio)) > threshold_log as beyond
from regressions where ends_with(to_version, '{SYNTHETIC_SUFFIX}')
"""

_SWEEP_ROWS = f"""
select verdict, coalesce(band_fraction >= sweep_min_band_fraction, false) as bands_separated,
       reference_points > 0 as has_reference,
       abs(ln(geomean_ratio)) > ln(1 + threshold) as beyond
from sweep_regressions, regression_settings
where ends_with(to_version, '{SYNTHETIC_SUFFIX}') and shared_points >= min_shared_points
"""


def _rows(con, sql):
    return [dict(zip(("verdict", "bands", "has_ref", "beyond"), r, strict=True)) for r in con.execute(sql).fetchall()]


def detection_benchmark(base_db: Path, settings: RegressionSettings | None = None) -> list[dict]:
    """Precision/recall of 'regression' verdicts for injected shifts, per pool, level and shift.

    For every real liger-family series (or sweep) a synthetic next version is
    made from a real run (pool 'rerun': an earlier same-version re-run, so the
    real run-to-run noise is in the pair; pool 'copy': the latest run, so the
    real p20-p80 bands but no run-to-run noise), its p20/p50/p80 multiplied by
    1 + shift. Positives: liger shifted, reference unchanged (or absent).
    Negatives: shift 0 (a same-version re-run) and liger shifted together with
    its reference (machine drift; only series that have a reference).
    """
    results = []
    for pool in ("rerun", "copy"):
        baseline = _build_synthetic(base_db, Scenario(pool, 0.0, False), settings)
        base = {"point": _rows(baseline, _POINT_ROWS), "sweep": _rows(baseline, _SWEEP_ROWS)}
        baseline.close()
        for shift in SHIFTS:
            shifted = _build_synthetic(base_db, Scenario(pool, shift, False), settings)
            drifted = _build_synthetic(base_db, Scenario(pool, shift, True), settings)
            for level, sql in (("point", _POINT_ROWS), ("sweep", _SWEEP_ROWS)):
                positives = _rows(shifted, sql)
                machine = [r for r in _rows(drifted, sql) if r["has_ref"]]
                negatives = base[level] + machine
                tp = sum(r["verdict"] == "regression" for r in positives)
                fp = sum(r["verdict"] == "regression" for r in negatives)
                eligible = [r for r in positives if r["bands"] and r["beyond"]]
                banded = [r for r in positives if r["bands"]]
                results.append(
                    {
                        "pool": pool,
                        "level": level,
                        "shift": shift,
                        "positives": len(positives),
                        "caught": tp,
                        "recall": tp / len(positives) if positives else math.nan,
                        "banded": len(banded),
                        "recall_banded": (
                            sum(r["verdict"] == "regression" for r in banded) / len(banded)
                            if banded else math.nan
                        ),
                        "eligible": len(eligible),
                        "recall_eligible": (
                            sum(r["verdict"] == "regression" for r in eligible) / len(eligible)
                            if eligible else math.nan
                        ),
                        "negatives": len(negatives),
                        "false_alarms": fp,
                        "precision": tp / (tp + fp) if tp + fp else math.nan,
                        "rerun_flagged": sum(
                            r["verdict"] in ("regression", "improvement") for r in base[level]
                        ),
                        "machine_pairs": len(machine),
                        "machine_drift": sum(r["verdict"] == "drift" for r in machine),
                    }
                )
            shifted.close()
            drifted.close()
    return results


def _fmt(x: float) -> str:
    return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.2f}"


def detection_markdown(results: list[dict]) -> str:
    lines = [
        "| pool | level | shift | positives | recall | recall, bands separated | "
        "recall, bands separated and beyond group noise | precision | false alarms / negatives | "
        "machine drift judged `drift` |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['pool']} | {r['level']} | {r['shift']:.0%} | {r['positives']} | {_fmt(r['recall'])} | "
            f"{_fmt(r['recall_banded'])} ({r['banded']}) | {_fmt(r['recall_eligible'])} ({r['eligible']}) | "
            f"{_fmt(r['precision'])} | {r['false_alarms']} / {r['negatives']} | "
            f"{r['machine_drift']} / {r['machine_pairs']} |"
        )
    return "\n".join(lines) + "\n"
