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


@dg.asset(group_name="warehouse", kinds={"duckdb"}, deps=list(PUBLIC_TABLES))
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
    context.log.info(f"liger.duckdb {done['mode']} at warehouse run {published.seq}: {done.get('refreshed', {})}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": rows,
            "path": dg.MetadataValue.path(str(wh.duckdb_path)),
            "warehouse_run": published.seq,
            "build_mode": done["mode"],
            "refreshed": dg.MetadataValue.json(done.get("refreshed", {})),
            "seconds_per_model": dg.MetadataValue.json(done.get("seconds", {})),
            "views": dg.MetadataValue.json(views),
            "settings": dg.MetadataValue.json(settings.model_dump()),
        }
    )
