"""Views: the DuckDB file with one view per sql/views/*.sql over the published generation."""

import dagster as dg
import duckdb
from pydantic import create_model

from pipeline.core.duckdb_build import build_views
from pipeline.core.regression_settings import RegressionSettings
from pipeline.core.warehouse import TABLES
from pipeline.defs.resources import WarehouseResource

# Run config mirrors RegressionSettings field by field, so the launchpad shows every threshold
# with its default and description; RegressionSettings stays the single source of truth.
LigerDuckdbConfig = create_model(
    "LigerDuckdbConfig",
    __base__=dg.Config,
    **{name: (field.annotation, field) for name, field in RegressionSettings.model_fields.items()},
)


@dg.asset(group_name="warehouse", kinds={"duckdb"}, deps=list(TABLES))
def liger_duckdb(context: dg.AssetExecutionContext, config: LigerDuckdbConfig, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """warehouse/liger.duckdb: views over the current generation's Parquet. Opens read-only from anywhere."""
    settings = RegressionSettings(**config.model_dump())
    wh = warehouse.open()

    with wh.lock():
        gen = wh.current_generation()
        if gen is None:
            raise dg.Failure("no published generation: materialize the warehouse tables first")
        applied = build_views(wh, gen, settings)
        removed = wh.collect_garbage()
    with duckdb.connect(str(wh.duckdb_path), read_only=True) as con:
        views = [r[0] for r in con.execute(
            "select view_name from duckdb_views() where not internal order by 1").fetchall()]
        rows = con.execute("select count(*) from measurements").fetchone()[0]
    context.log.info(f"applied {len(applied)} SQL files; removed old generations: {removed}")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": rows,
            "path": dg.MetadataValue.path(str(wh.duckdb_path)),
            "generation": gen.name,
            "views": dg.MetadataValue.json(views),
            "sql_files": dg.MetadataValue.json(applied),
            "settings": dg.MetadataValue.json(settings.model_dump()),
        }
    )
