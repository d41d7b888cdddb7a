"""Pure contracts with outside formats: no Dagster, no DuckDB, no I/O beyond what a caller hands in."""
