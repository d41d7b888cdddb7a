"""Analyses that read the published warehouse (``liger.duckdb``); pure Python, no Dagster."""
