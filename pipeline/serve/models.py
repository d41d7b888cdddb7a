"""The model folders liger.duckdb is made of, and what the build registers before them.

  sql/serve/    the readers' tables over the Delta snapshot (fact_measurement with provenance, ...)
  sql/analyze/  the regression layer, in the order its headers' dependencies give

Every caller that runs them (the build, `pipeline.connect()`, compare, Spark) loads them here.
"""

from __future__ import annotations

from pipeline.config import SQL_DIR
from pipeline.contracts.tables import SCHEMAS
from pipeline.engine.graph import load_models
from pipeline.engine.header import SqlModel

SERVE_DIR, ANALYZE_DIR = SQL_DIR / "serve", SQL_DIR / "analyze"
# What the build registers before the models: the Delta snapshot and the lookup tables.
LOOKUP_TABLES = ("regression_settings", "liger_version_order", "warehouse_run", "commit_kernel")
SERVE_INPUTS = tuple(f"delta_{t}" for t in SCHEMAS) + LOOKUP_TABLES
# made by Python after the analysis models (serve/change_points.py); views may read it
PYTHON_TABLES = ("change_points",)


def serve_models() -> list[SqlModel]:
    return load_models(SERVE_DIR, SERVE_INPUTS)


def analyze_models() -> list[SqlModel]:
    """The analysis models users query (sql/analyze), in dependency order."""
    serve = [m.name for m in serve_models()]
    return load_models(ANALYZE_DIR, (*SERVE_INPUTS, *serve, *PYTHON_TABLES))
