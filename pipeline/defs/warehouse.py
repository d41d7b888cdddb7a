"""Normalize: merge the newly staged contents into the Delta tables (one commit per changed
table, then the run's row in warehouse_run makes them visible)."""

import dagster as dg

from pipeline.common import prefetch
from pipeline.contracts.tables import BY_NAME, PUBLIC_TABLES
from pipeline.defs.resources import WarehouseResource
from pipeline.store.merge import Merger


def column_schema(table: str) -> dg.TableSchema:
    """Column names, types and descriptions, all from the table registry."""
    return dg.TableSchema(
        columns=[
            dg.TableColumn(name=c.name, type=str(c.type), description=c.description) for c in BY_NAME[table].columns
        ]
    )


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            t,
            group_name="warehouse",
            description=BY_NAME[t].description,
            kinds={"deltalake", "duckdb"},
            deps=["staged_sources"],
            # columns and their docs on the definition too: the UI shows them before a materialization
            metadata={"dagster/column_schema": column_schema(t)},
        )
        for t in PUBLIC_TABLES
    ],
    ins={"staged_sources": dg.AssetIn()},
)
def warehouse_tables(context: dg.AssetExecutionContext, warehouse: WarehouseResource, staged_sources: dict):
    prefetch.start(prefetch.ANALYSIS)
    wh = warehouse.open()
    result = Merger(wh, warehouse.staging()).run(
        staged_sources["sources"],
        staged_sources["problems"],
        run_id=context.run.run_id,
        reference=staged_sources.get("reference"),
    )
    if result.mode == "full":  # every plot is drawn again
        prefetch.start(prefetch.PLOTS)
    pub = result.published
    context.log.info(
        f"{result.mode} run ({result.reason}): {result.stats.get('facts_inserted', 0)} new facts; "
        f"published state {pub.seq if pub else None}"
    )
    for table in PUBLIC_TABLES:
        metadata = {
            "delta_table": wh.store.uri(table),
            "delta_version": pub.versions.get(table) if pub else None,
            "warehouse_run": pub.seq if pub else None,
            "run_mode": result.mode,
            "run_reason": result.reason,
        }
        version = pub.versions.get(table) if pub else None
        if version is not None:
            metadata["dagster/row_count"] = wh.store.row_count(table, version)
        metadata["dagster/column_schema"] = column_schema(table)
        if table == "fact_measurement":
            metadata |= {k: v for k, v in result.stats.items() if isinstance(v, int)}
        yield dg.MaterializeResult(asset_key=table, metadata=metadata)


__all__ = ["warehouse_tables", "PUBLIC_TABLES"]
