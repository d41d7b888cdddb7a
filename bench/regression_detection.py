"""Precision and recall of the regression verdicts on synthetic shifts injected into real series.

    python -m bench.regression_detection                 # builds the shipped warehouse, writes the table
    python -m bench.regression_detection path/to/liger.duckdb

For every real liger-family series (or sweep) a synthetic next version
(``X.Y.Z.post9999``, which sorts right after X.Y.Z) is made from real runs, its
p20/p50/p80 multiplied by 1 + shift. Pools:

* ``copy, 3 runs``: X gets two more runs (its latest run x1.02 and x0.98) and
  the new version three (the latest run x(1 + shift) x {1, 1.02, 0.98}): several
  runs per version on both sides, every run taking part, real bands; the runs
  spread 4 %, about the real pooled re-run noise of speed sweeps.
* ``rerun``: the new version is an *earlier same-version re-run*, so the pair
  carries real run-to-run noise, and X keeps both its runs.
* ``split runs``: like ``copy, 3 runs``, and in one sweep in ten the new
  version has a fourth run x2 off the others; only those pairs are counted.
  Whichever run counted would decide the answer, so no regression or improvement
  may be called (the verdict is `unstable`).

Positives: liger shifted, reference unchanged (or absent). Negatives: shift 0
(a same-version copy) and liger shifted together with its reference (machine
drift; only series that have a reference). Flagged = verdict ``regression``.
Only ``make bench`` and this script write ``bench/results/regression_detection.md``.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.analyze.settings import RegressionSettings
from pipeline.analyze.versions import parse_version
from tests.fixtures.regression import build_regression_layer

PROJECT = Path(__file__).resolve().parents[1]
RESULT = PROJECT / "bench" / "results" / "regression_detection.md"
SHIFTS = (0.02, 0.05, 0.10, 0.50)
SYNTHETIC_SUFFIX = ".post9999"


@dataclass(frozen=True)
class Pool:
    name: str
    recency: int  # which real run of X the new version is made from (1 = latest)
    new_runs: tuple[float, ...]  # per-run factor of the new version's runs (times 1 + shift)
    extra_old_runs: tuple[float, ...]  # extra runs of X itself: its latest run times these
    split_modulo: int = 1  # the last new run only for sweeps whose hash % split_modulo = 0


POOLS = (
    Pool("copy, 3 runs", 1, (1.0, 1.02, 0.98), (1.02, 0.98)),
    Pool("rerun", 2, (1.0,), ()),
    # the 3-run copies plus, in one sweep in ten, a fourth run x2 off: the pooled noise is a
    # median over re-run sweeps, so the rare bad run cannot move it (if every sweep disagreed
    # x2, the noise itself would be x2 and nothing could be called)
    Pool("split runs", 1, (1.0, 1.02, 0.98, 2.0), (1.02, 0.98), split_modulo=10),
)

_SYNTHETIC_SQL = """
create or replace table measurements as
with ranked as (
    select
        *,
        row_number() over (
            partition by kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, x_value, extra_config, liger_version
            order by observed_at desc, measurement_digest desc
        ) as run_recency
    from base_measurements
),
shifted as (
    select
        *,
        case when starts_with(kernel_provider, 'liger') then $liger_factor else $reference_factor end
            as factor
    from ranked
    where run_recency = $recency and list_contains($plain, liger_version)
),
new_version as (
    select
        sha256(measurement_digest || '|synthetic|' || cast(run.hour as varchar)) as measurement_digest,
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
        gpu_name, x_name, x_label, x_value, extra_config,
        liger_version || $suffix as liger_version,
        observed_at + interval 1000 days + to_hours(run.hour) as observed_at,
        p20 * factor * run.jitter as p20, p50 * factor * run.jitter as p50,
        p80 * factor * run.jitter as p80,
        source_count
    from shifted
    cross join (select unnest($new_runs) as jitter, unnest(range(len($new_runs))) as hour) as run
    where run.hour < $always_runs
        or hash(kernel_name || kernel_provider || kernel_operation_mode || gpu_name) % $split_modulo = 0
),
old_version as (
    select
        sha256(measurement_digest || '|extra-run|' || cast(run.hour as varchar)) as measurement_digest,
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
        gpu_name, x_name, x_label, x_value, extra_config, liger_version,
        observed_at + to_hours(run.hour + 1) as observed_at,
        p20 * run.jitter as p20, p50 * run.jitter as p50, p80 * run.jitter as p80,
        source_count
    from ranked
    cross join (
        select unnest($old_runs) as jitter, unnest(range(len($old_runs))) as hour
    ) as run
    where run_recency = 1 and list_contains($plain, liger_version)
)
select * exclude (run_recency) from ranked
union all
select * from new_version
union all
select * from old_version
"""


def _build(base_db: Path, pool: Pool, shift: float, reference_shifted: bool, settings):
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
    plain = [
        v for v in versions if (pv := parse_version(v)) is not None and not (pv.pre or pv.post or pv.dev or pv.local)
    ]
    factor = 1.0 + shift
    con.execute(
        _SYNTHETIC_SQL,
        {
            "liger_factor": factor,
            "reference_factor": factor if reference_shifted else 1.0,
            "recency": pool.recency,
            "plain": plain,
            "suffix": SYNTHETIC_SUFFIX,
            "new_runs": list(pool.new_runs),
            "old_runs": list(pool.extra_old_runs),
            "split_modulo": pool.split_modulo,
            "always_runs": len(pool.new_runs) - (1 if pool.split_modulo > 1 else 0),
        },
    )
    build_regression_layer(con, settings)
    return con


_POINT_ROWS = f"""
select verdict, bands_separated, reference_count > 0 as has_reference,
       abs(ln(ratio)) > threshold_log as beyond, to_runs
from regressions where ends_with(to_version, '{SYNTHETIC_SUFFIX}')
"""

_SWEEP_ROWS = f"""
select verdict, coalesce(band_fraction >= sweep_min_band_fraction, false) as bands_separated,
       reference_points > 0 as has_reference,
       abs(ln(geomean_ratio)) > ln(1 + threshold) as beyond, to_runs
from sweep_regressions, regression_settings
where ends_with(to_version, '{SYNTHETIC_SUFFIX}') and shared_points >= min_shared_points
"""


def _rows(con, sql, pool: Pool):
    """The synthetic pairs of one build; in a split pool only the pairs whose new version was split."""
    rows = [
        dict(zip(("verdict", "bands", "has_ref", "beyond", "to_runs"), r, strict=True))
        for r in con.execute(sql).fetchall()
    ]
    return [r for r in rows if r["to_runs"] == len(pool.new_runs)] if pool.split_modulo > 1 else rows


def _share(rows: list[dict]) -> float:
    return sum(r["verdict"] == "regression" for r in rows) / len(rows) if rows else math.nan


def detection_benchmark(
    base_db: Path, settings: RegressionSettings | None = None, shifts: tuple[float, ...] = SHIFTS
) -> list[dict]:
    """One row per pool, level and shift: recall, precision, false alarms, unstable verdicts."""
    results = []
    for pool in POOLS:
        baseline = _build(base_db, pool, 0.0, False, settings)
        base = {"point": _rows(baseline, _POINT_ROWS, pool), "sweep": _rows(baseline, _SWEEP_ROWS, pool)}
        baseline.close()
        for shift in shifts:
            shifted = _build(base_db, pool, shift, False, settings)
            drifted = _build(base_db, pool, shift, True, settings)
            for level, sql in (("point", _POINT_ROWS), ("sweep", _SWEEP_ROWS)):
                positives = _rows(shifted, sql, pool)
                machine = [r for r in _rows(drifted, sql, pool) if r["has_ref"]]
                negatives = base[level] + machine
                tp = sum(r["verdict"] == "regression" for r in positives)
                fp = sum(r["verdict"] == "regression" for r in negatives)
                banded = [r for r in positives if r["bands"]]
                eligible = [r for r in banded if r["beyond"]]
                results.append(
                    {
                        "pool": pool.name,
                        "level": level,
                        "shift": shift,
                        "positives": len(positives),
                        "caught": tp,
                        "recall": tp / len(positives) if positives else math.nan,
                        "banded": len(banded),
                        "recall_banded": _share(banded),
                        "eligible": len(eligible),
                        "recall_eligible": _share(eligible),
                        "negatives": len(negatives),
                        "false_alarms": fp,
                        "precision": tp / (tp + fp) if tp + fp else math.nan,
                        "rerun_flagged": sum(r["verdict"] in ("regression", "improvement") for r in base[level]),
                        "unstable": sum(r["verdict"] == "unstable" for r in positives),
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
        "judged `unstable` | machine drift judged `drift` |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['pool']} | {r['level']} | {r['shift']:.0%} | {r['positives']} | {_fmt(r['recall'])} | "
            f"{_fmt(r['recall_banded'])} ({r['banded']}) | {_fmt(r['recall_eligible'])} ({r['eligible']}) | "
            f"{_fmt(r['precision'])} | {r['false_alarms']} / {r['negatives']} | "
            f"{r['unstable']} / {r['positives']} | {r['machine_drift']} / {r['machine_pairs']} |"
        )
    return "\n".join(lines) + "\n"


def _shipped_warehouse(tmp: Path) -> Path:
    import dagster as dg

    from pipeline.definitions import defs
    from pipeline.defs.resources import WarehouseResource

    d = defs()
    result = dg.materialize(
        [*d.assets, *(d.asset_checks or [])],
        resources={"warehouse": WarehouseResource(data_raw=str(PROJECT / "data_raw"), warehouse=str(tmp))},
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    return tmp / "liger.duckdb"


def main(argv: list[str]) -> None:
    """``[liger.duckdb] [--json PATH --shifts 0.1,0.5]``: with --json the results go there as JSON and
    the tracked table is left alone (the tests run it so, in their own process)."""
    args = list(argv)
    json_out = shifts = None
    if "--json" in args:
        i = args.index("--json")
        json_out = Path(args[i + 1])
        del args[i : i + 2]
    if "--shifts" in args:
        i = args.index("--shifts")
        shifts = tuple(float(x) for x in args[i + 1].split(","))
        del args[i : i + 2]
    with tempfile.TemporaryDirectory() as tmp:
        base_db = Path(args[0]) if args else _shipped_warehouse(Path(tmp) / "warehouse")
        results = detection_benchmark(base_db, shifts=shifts or SHIFTS)
    if json_out is not None:
        json_out.write_text(json.dumps(results, allow_nan=True))
        return
    table = detection_markdown(results)
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    staging = RESULT.with_suffix(".md.tmp")
    staging.write_text(
        "# Regression detection: synthetic shifts injected into real series\n\n"
        "Generated by `python -m bench.regression_detection` (part of `make bench`; see "
        "docs/regressions.md for the method).\n\n" + table
    )
    staging.replace(RESULT)
    print(table)


if __name__ == "__main__":
    main(sys.argv[1:])
