"""Normalize: merge the newly staged contents into the Delta tables (one commit per changed
table, then the run's row in warehouse_run makes them visible)."""

import dagster as dg

from pipeline.defs.resources import WarehouseResource
from pipeline.store.merge import Merger

PUBLIC_TABLES = ("fact_measurement", "fact_sighting", "dim_environment", "dim_protocol", "dim_workload",
                 "dim_implementation", "source", "quarantine")
DESCRIPTIONS = {
    "fact_measurement": "One row per distinct measurement (digest-keyed): p20/p50/p80 in the CSV unit, its own dimension digests. Delta table; readers add provenance and learned dimensions (liger.duckdb).",
    "fact_sighting": "Append-only: one row per measurement x source content that carried it (path, content sha256, upstream commit and date).",
    "dim_environment": "Execution environments (GPU hosts) keyed by digest.",
    "dim_protocol": "Benchmark protocols (timed pass, metric) keyed by digest.",
    "dim_workload": "Workloads (kernel, x point, config) keyed by digest.",
    "dim_implementation": "Implementations (kernel, provider, Liger release) keyed by digest.",
    "source": "One row per ingested file content: path, content sha256, kind, upstream commit/date, rows read/quarantined.",
    "quarantine": "Rejected rows and files: source_file, location, reason code, raw text.",
}


def column_schema(schema) -> dg.TableSchema:
    return dg.TableSchema(columns=[dg.TableColumn(name=f.name, type=str(f.type)) for f in schema])


@dg.multi_asset(
    specs=[dg.AssetSpec(t, group_name="warehouse", description=DESCRIPTIONS[t], kinds={"deltalake", "duckdb"},
                        deps=["staged_sources"]) for t in PUBLIC_TABLES],
    ins={"staged_sources": dg.AssetIn()},
)
def warehouse_tables(context: dg.AssetExecutionContext, warehouse: WarehouseResource, staged_sources: dict):
    wh = warehouse.open()
    result = Merger(wh, warehouse.staging()).run(staged_sources["sources"], staged_sources["problems"],
                                                 run_id=context.run.run_id)
    pub = result.published
    context.log.info(f"{result.mode} run ({result.reason}): {result.stats.get('facts_inserted', 0)} new facts; "
                     f"published state {pub.seq if pub else None}")
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
        schema = wh.store.schema(table)
        if schema is not None:
            metadata["dagster/column_schema"] = column_schema(schema)
        if table == "fact_measurement":
            metadata |= {k: v for k, v in result.stats.items() if isinstance(v, int)}
        yield dg.MaterializeResult(asset_key=table, metadata=metadata)


__all__ = ["warehouse_tables", "PUBLIC_TABLES"]
