"""Normalize: staged rows + records -> fact and dimension Parquet tables, published as one generation."""


from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq

from pipeline.core.warehouse import TABLES
from pipeline.defs.resources import WarehouseResource

DESCRIPTIONS = {
    "fact_measurement": "One row per distinct measurement (digest-keyed), p20/p50/p80 in the CSV unit, four dimension digests, provenance.",
    "dim_environment": "Execution environments (GPU hosts) keyed by digest.",
    "dim_protocol": "Benchmark protocols (timed pass, metric) keyed by digest.",
    "dim_workload": "Workloads (kernel, x point, config) keyed by digest.",
    "dim_implementation": "Implementations (kernel, provider, Liger release) keyed by digest.",
    "source": "One row per ingested file: path, content sha256, kind, upstream commit/date, rows read/quarantined.",
    "quarantine": "Rejected rows and files: source_file, location, reason code, raw text.",
}


def column_schema(path: Path) -> dg.TableSchema:
    schema = pq.read_schema(path)
    return dg.TableSchema(columns=[dg.TableColumn(name=f.name, type=str(f.type)) for f in schema])


@dg.multi_asset(
    specs=[dg.AssetSpec(t, group_name="warehouse", description=DESCRIPTIONS[t], kinds={"parquet", "duckdb"},
                        deps=["staged_sources"]) for t in TABLES],
    ins={"staged_sources": dg.AssetIn()},
)
def warehouse_tables(context: dg.AssetExecutionContext, warehouse: WarehouseResource, staged_sources: dict):
    wh = warehouse.open()
    gen, summary = wh.build_generation(staged_sources["sources"], staged_sources["problems"])
    with wh.lock():
        wh.publish(gen)
    context.log.info(f"published generation {gen.name}: {summary.facts} facts")
    for table in TABLES:
        path = gen / f"{table}.parquet"
        metadata = {
            "dagster/row_count": summary.table_rows[table],
            "dagster/column_schema": column_schema(path),
            "path": dg.MetadataValue.path(str(path)),
            "generation": gen.name,
        }
        if table == "fact_measurement":
            metadata |= {"folded_records": summary.folded_records, "record_only_facts": summary.record_only_facts}
        if table == "quarantine":
            metadata |= {f"reason/{k}": v for k, v in summary.quarantined_by_reason.items()}
        yield dg.MaterializeResult(asset_key=table, metadata=metadata)
