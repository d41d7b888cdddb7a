"""Names inside a built liger.duckdb that readers outside the build use (the run summary, the Dagster
asset's row count), in a module of their own: importing the build itself costs `make run`'s
nothing-new path a tenth of a second."""

INTERNAL_SCHEMA = "internal"
# The published facts' own files in a built liger.duckdb: one row per fact, without the joins of
# `measurements` (provenance for every fact), for counts of the facts' own columns.
FACT_FILES = f"{INTERNAL_SCHEMA}.delta_fact_measurement"
