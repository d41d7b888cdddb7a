"""Regression report and dashboard assets, and the newest-version checks (Dagster wrappers over
pipeline.outputs.report.write and pipeline.outputs.site)."""

import json
from pathlib import Path

import dagster as dg
from pydantic import Field

from pipeline.common import prefetch
from pipeline.common.duck import open_readonly
from pipeline.common.files import atomic_path, publish
from pipeline.defs.resources import WarehouseResource
from pipeline.outputs.report.queries import VersionCoverage, newest_overview, newest_regressions
from pipeline.outputs.report.write import DEFAULT_MAX_PLOTS, write_report
from pipeline.outputs.site import POINTS_CACHE, render_site, write_site
from pipeline.serve.duckdb_build import built_state


class ReportConfig(dg.Config):
    max_plots: int = Field(
        default=DEFAULT_MAX_PLOTS,
        ge=0,
        description="Plots drawn, for the first flagged sweeps (newest version first, then severity), and as "
        "many per-commit trend plots; every flagged sweep is listed in the report's table regardless.",
    )


_NO_REGRESSIONS = dg.AssetCheckSpec(
    "newest_version_has_no_regressions",
    asset="regression_report",
    description="WARN when any liger sweep regressed in the newest measured Liger version.",
)
_COMPARED = dg.AssetCheckSpec(
    "newest_version_was_compared",
    asset="regression_report",
    description="WARN when none of the newest version's liger series could be compared with an earlier "
    "version: then 'no regressions' says nothing.",
)


@dg.asset(
    group_name="reports",
    kinds={"duckdb", "html"},
    deps=[dg.AssetKey("liger_duckdb")],
    # before the dashboard's step: the report forks its plot helpers, best before polars' thread pool
    # (the dashboard's) exists in the process
    op_tags={"dagster/priority": "1"},
    # evaluated in the report's step, on one connection: a step of their own each cost more than they do
    check_specs=[_NO_REGRESSIONS, _COMPARED],
    description=(
        "warehouse/reports/regressions.{html,md}: first the per-commit trend of the flagged commit sweeps "
        "(at most `max_plots`) and the suspect commits of the commit regressions; then the newest version's "
        "verdicts and coverage, coverage per version, every flagged sweep in one table, plots (p50 with "
        "p20-p80 band per version, reference providers beside it) for the first `max_plots` of them."
    ),
)
def regression_report(
    context: dg.AssetExecutionContext, config: ReportConfig, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    root = warehouse.warehouse_path()
    out_dir = root / "reports"
    # The report is a function of liger.duckdb's state and the plot cap: an unchanged warehouse
    # keeps the report it has (a re-run with nothing new costs no plotting).
    key = {"duckdb": built_state(warehouse.open()), "max_plots": config.max_plots}
    previous = _built_from(out_dir)
    if key["duckdb"] and previous.get("key") == key and Path(previous["summary"]["html_path"]).exists():
        summary = previous["summary"]
        context.log.info("warehouse unchanged since the last report: kept it")
    else:
        summary = write_report(
            root / "liger.duckdb", out_dir, max_plots=config.max_plots, remote_root=warehouse.warehouse_uri()
        )
        _record_built_from(out_dir, {"key": key, "summary": summary})
    context.log.info(
        f"{summary['flagged_sweeps']} flagged sweeps, {summary['plots']} plotted -> {summary['html_path']}"
    )
    shown_apart = ("html_path", "md_path", "newest_verdicts", "newest_reasons", "newest_regressions")
    metadata = {k: v for k, v in summary.items() if k not in shown_apart}
    metadata["newest_version"] = str(summary["newest_version"])
    metadata["newest_verdicts"] = dg.MetadataValue.json(summary["newest_verdicts"])
    metadata["html"] = dg.MetadataValue.path(summary["html_path"])
    metadata["markdown"] = dg.MetadataValue.path(summary["md_path"])
    return dg.MaterializeResult(metadata=metadata, check_results=_newest_version_checks(warehouse, summary))


@dg.asset(
    group_name="reports",
    kinds={"duckdb", "html"},
    deps=[dg.AssetKey("liger_duckdb")],
    description=(
        "warehouse/site/: the static dashboard (`make site`): index.html (sweep explorer, per-GPU overview), "
        "one release-<version>.html per Liger version and plotly.min.js; opens from disk, no server. "
        "Rebuilt only when liger.duckdb's build state changed."
    ),
)
def dashboard(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    root = warehouse.warehouse_path()
    out_dir = root / "site"
    index = out_dir / "index.html"
    key = _site_key(warehouse)
    if _site_is_current(out_dir, key):
        rebuilt = False
        context.log.info("warehouse unchanged since the last dashboard: kept it")
    else:
        prefetch.start(prefetch.DASHBOARD)
        rendered = render_site(root / "liger.duckdb", warehouse.warehouse_uri(), out_dir / POINTS_CACHE)
        write_site(root / "liger.duckdb", out_dir, rendered)
        _record_built_from(out_dir, {"key": key})
        rebuilt = True
    pages = sorted(out_dir.glob("*.html"))
    size = sum(p.stat().st_size for p in pages)
    context.log.info(f"dashboard {'rebuilt' if rebuilt else 'kept'}: {index} ({len(pages)} pages, {size:,} bytes)")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(index)),
            "size_bytes": index.stat().st_size,
            "pages": len(pages),
            "html_bytes": size,
            "rebuilt": rebuilt,
        }
    )


# What the report's and the dashboard's files were made from (liger.duckdb's build state, settings)
BUILT_FROM = ".built_from.json"


def _built_from(out_dir: Path) -> dict:
    stamp = out_dir / BUILT_FROM
    return json.loads(stamp.read_text()) if stamp.exists() else {}


def _record_built_from(out_dir: Path, content: dict) -> None:
    tmp = atomic_path(out_dir / BUILT_FROM)
    tmp.write_text(json.dumps(content, default=str))
    publish(tmp, out_dir / BUILT_FROM)


def _site_key(warehouse: WarehouseResource) -> dict:
    """Like the report, the site is a function of liger.duckdb's build state only."""
    return {"duckdb": built_state(warehouse.open())}


def _site_is_current(out_dir: Path, key: dict) -> bool:
    previous = _built_from(out_dir)
    return bool(key["duckdb"]) and previous.get("key") == key and (out_dir / "index.html").exists()


def _newest_version_checks(warehouse: WarehouseResource, summary: dict) -> list[dg.AssetCheckResult]:
    if "newest_regressions" in summary:  # the report read them (a summary from before read again below)
        newest = VersionCoverage(
            version=summary["newest_version"],
            series=summary["newest_series"],
            compared=summary["newest_compared"],
            verdicts=summary["newest_verdicts"],
            reasons=summary["newest_reasons"],
        )
        preview = summary["newest_regressions"]
    else:
        # the readers' own opening: the dashboard may be reading the file beside this step
        with open_readonly(warehouse.open().duckdb_path, warehouse.warehouse_uri()) as con:
            newest, preview = newest_overview(con), newest_regressions(con)
    regressed = newest.verdicts.get("regression", 0)
    no_regressions = dg.AssetCheckResult(
        check_name=_NO_REGRESSIONS.name,
        passed=regressed == 0,
        severity=dg.AssetCheckSeverity.WARN,
        description=newest.regressions_line(),
        metadata={
            "newest_version": str(newest.version),
            "regressed_sweeps": regressed,
            "compared_series": newest.compared,
            "series": newest.series,
            "regressions": dg.MetadataValue.json(preview),
        },
    )
    compared = dg.AssetCheckResult(
        check_name=_COMPARED.name,
        passed=newest.compared > 0,
        severity=dg.AssetCheckSeverity.WARN,
        description=newest.sentence(),
        metadata={
            "newest_version": str(newest.version),
            "series": newest.series,
            "compared_series": newest.compared,
            "not_compared": dg.MetadataValue.json(newest.reasons),
        },
    )
    return [no_regressions, compared]
