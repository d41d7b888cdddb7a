"""Which Parquet files make up each warehouse table: the one place that knows the storage layout.

The Spark views take ``{table: [parquet file paths or URIs]}``. Today a published generation holds one
file per table under ``<warehouse>/current/``; with Delta Lake tables the same mapping comes from the
Delta log (the snapshot's ``add`` actions), and this function is the one to swap.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["WAREHOUSE_TABLES", "current_table_files"]

# The tables the SQL views read (names seen by SQL never change with the storage layout).
WAREHOUSE_TABLES = (
    "fact_measurement", "dim_environment", "dim_protocol", "dim_workload", "dim_implementation",
    "source", "quarantine",
)


def current_table_files(warehouse: Path) -> dict[str, list[str]]:
    """``{table: [file]}`` of the generation ``<warehouse>/current`` points at."""
    current = (warehouse / "current").resolve()
    files = {table: current / f"{table}.parquet" for table in WAREHOUSE_TABLES}
    missing = [t for t, f in files.items() if not f.is_file()]
    if missing:
        raise FileNotFoundError(f"no published warehouse under {warehouse} (missing {', '.join(missing)}); run `make run` first")
    return {table: [str(path)] for table, path in files.items()}
