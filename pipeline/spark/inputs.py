"""Which Parquet files make up each warehouse table: the one place that knows the storage layout.

Spark reads the Delta tables of one published warehouse state from their snapshot's file lists
(the Delta log's `add` actions, as the DuckDB views do), registered as `delta_<table>`; the same
sql/serve models then build the readers' tables (fact_measurement with its provenance, ...). In
production, delta-spark can read the tables directly (docs/spark.md).
"""

from __future__ import annotations

from pipeline.contracts.tables import SCHEMAS
from pipeline.store.warehouse import Published, Warehouse

__all__ = ["table_files"]


def table_files(wh: Warehouse, published: Published | None = None) -> dict[str, list[str]]:
    """``{delta_<table>: [file]}`` of the newest published state (or ``published``)."""
    published = published or wh.published()
    if published is None:
        raise FileNotFoundError(f"nothing published in {wh.root_uri}; run `make run` first")
    files = wh.snapshot_files(published)
    return {f"delta_{t}": files[t] for t in SCHEMAS}
