"""Regression report asset and the newest-version check (Dagster wrappers over pipeline.core.report)."""


import dagster as dg

from pipeline.core.report import write_report
from pipeline.defs.resources import WarehouseResource

_NEWEST_REGRESSIONS_SQL = """
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
       from_version, to_version, geomean_ratio, geomean_normalized_ratio, reason
from sweep_regressions
where is_newest and verdict = 'regression'
order by geomean_ratio desc
"""


@dg.asset(
    group_name="reports",
    kinds={"duckdb", "html"},
    deps=[dg.AssetKey("liger_duckdb")],
    description=(
        "warehouse/reports/regressions.{html,md}: headline sweep regressions with a plot per "
        "flagged sweep (p50 and p20-p80 band per version, reference providers beside it)."
    ),
)
def regression_report(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    root = warehouse.warehouse_path()
    out_dir = root / "reports"
    summary = write_report(root / "liger.duckdb", out_dir, remote_root=warehouse.warehouse_uri())
    context.log.info(
        f"{summary['regressions']} regressed sweeps, {summary['plots']} plots -> {out_dir}"
    )
    metadata = {k: v for k, v in summary.items() if k not in ("html_path", "md_path")}
    metadata["newest_version"] = str(summary["newest_version"])
    metadata["html"] = dg.MetadataValue.path(summary["html_path"])
    metadata["markdown"] = dg.MetadataValue.path(summary["md_path"])
    return dg.MaterializeResult(metadata=metadata)


@dg.asset_check(
    asset=regression_report,
    name="newest_version_has_no_regressions",
    description="WARN when any liger sweep regressed in the newest measured Liger version.",
)
def newest_version_has_no_regressions(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.open().open_duckdb() as con:
        newest = con.execute("select liger_version from liger_versions where is_newest").fetchall()
        cur = con.execute(_NEWEST_REGRESSIONS_SQL)
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    newest_version = newest[0][0] if newest else None
    preview = [
        f"{r['kernel_name']}/{r['kernel_provider']}/{r['kernel_operation_mode']}/"
        f"{r['metric_name']}/{r['gpu_name']} {r['from_version']}->{r['to_version']}: {r['reason']}"
        for r in rows[:20]
    ]
    return dg.AssetCheckResult(
        passed=not rows,
        severity=dg.AssetCheckSeverity.WARN,
        description=(
            f"{len(rows)} sweep(s) regressed in {newest_version}" if rows
            else f"no sweep regressed in {newest_version}"
        ),
        metadata={
            "newest_version": str(newest_version),
            "regressed_sweeps": len(rows),
            "regressions": dg.MetadataValue.json(preview),
        },
    )
