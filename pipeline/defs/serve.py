"""Views: liger.duckdb, one view or table per model of sql/serve and sql/regress over the newest published
warehouse state."""

import dagster as dg
from pydantic import create_model

from pipeline.contracts.tables import PUBLIC_TABLES
from pipeline.defs.resources import WarehouseResource
from pipeline.regress.settings import RegressionSettings
from pipeline.serve.duckdb_build import build_duckdb
from pipeline.serve.names import FACT_FILES

# Run config mirrors RegressionSettings field by field, so the launchpad shows every threshold
# with its default and description; RegressionSettings stays the single source of truth.
LigerDuckdbConfig = create_model(
    "LigerDuckdbConfig",
    __base__=dg.Config,
    **{name: (field.annotation, field) for name, field in RegressionSettings.model_fields.items()},
)


# Sources that go silent (issue 54): Dagster shows the source_freshness view's verdict on the asset that
# builds it, a WARN check, so the UI says which source stopped; the alert path delivers it as a stoppage.
SOURCES_FRESH = dg.AssetCheckSpec(
    "sources_are_fresh",
    asset="liger_duckdb",
    description="No source family (gh-pages CI per GPU, committed CSVs, commit runs, KernelIndex records) is "
    "silent for more than LIGER_FRESHNESS_FACTOR times its usual interval between runs (source_freshness).",
)
FRESHNESS_SQL = """
select family, scope, strftime(newest_run_at, '%Y-%m-%d') as newest, round(usual_interval_hours / 24, 1) as every_days,
       strftime(overdue_at, '%Y-%m-%d') as overdue_since
from source_freshness where overdue order by family, scope
"""


def freshness_result(con) -> dg.AssetCheckResult:
    overdue = [dict(zip(("family", "scope", "newest_run", "every_days", "overdue_since"), r, strict=True))
               for r in con.execute(FRESHNESS_SQL).fetchall()]  # fmt: skip
    text = "; ".join(
        f"{o['family']} {o['scope']}".strip() + f" silent since {o['newest_run']} (overdue since {o['overdue_since']})"
        for o in overdue
    )
    return dg.AssetCheckResult(
        check_name=SOURCES_FRESH.name,
        passed=not overdue,
        severity=dg.AssetCheckSeverity.WARN,
        description=text or "every source ran within its usual interval",
        metadata={"overdue": dg.MetadataValue.json(overdue)},
    )


@dg.asset(group_name="warehouse", kinds={"duckdb"}, deps=list(PUBLIC_TABLES), check_specs=[SOURCES_FRESH])
def liger_duckdb(
    context: dg.AssetExecutionContext, config: LigerDuckdbConfig, warehouse: WarehouseResource
) -> dg.MaterializeResult:
    """warehouse/liger.duckdb: views over the newest published state of the Delta tables. Opens
    read-only from anywhere (a warehouse on S3: through pipeline.connect())."""
    settings = RegressionSettings(**config.model_dump())
    wh = warehouse.open()
    published = wh.published()
    if published is None:
        raise dg.Failure("nothing published yet: materialize the warehouse tables first")
    with wh.duckdb_lock():
        done = build_duckdb(wh, published, settings)
    with wh.open_duckdb() as con:
        views = [
            r[0]
            for r in con.execute(
                "select view_name from duckdb_views() where schema_name = 'main' and not internal order by 1"
            ).fetchall()
        ]
        rows = con.execute(f"select count(*) from {FACT_FILES}").fetchone()[0]
        fresh = freshness_result(con)
    context.log.info(f"liger.duckdb {done['mode']} at warehouse run {published.seq}: {done.get('refreshed', {})}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": rows,
            "path": dg.MetadataValue.path(str(wh.duckdb_path)),
            "warehouse_run": published.seq,
            "build_mode": done["mode"],
            "refreshed": dg.MetadataValue.json(done.get("refreshed", {})),
            "seconds_per_model": dg.MetadataValue.json(done.get("seconds", {})),
            "seconds_per_phase": dg.MetadataValue.json(done.get("phases", {})),
            "views": dg.MetadataValue.json(views),
            "settings": dg.MetadataValue.json(settings.model_dump()),
        },
        check_results=[fresh],
    )
