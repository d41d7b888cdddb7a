"""The SQL model folders and the one loader that reads them: every caller that runs a model folder
(the batch, the build, `pipeline.connect()`, compare, the checks, Spark) loads it here.

  sql/model/     over a batch of staged facts -> the batch's temp tables (model/run.py)
  sql/serve/     the readers' tables over the Delta snapshot (fact_measurement with provenance, ...)
  sql/regress/   the regression rule, one sub-folder per question it answers (series, noise,
                 verdicts, commits, alerts), in the order its headers' dependencies give
  sql/checks/    the warehouse checks: each returns its offending rows
"""

from __future__ import annotations

from pathlib import Path

from pipeline.config import SQL_DIR
from pipeline.contracts.tables import SCHEMAS
from pipeline.engine.graph import load_models
from pipeline.engine.header import SqlModel, read_model

MODEL_DIR, SERVE_DIR, REGRESS_DIR, CHECKS_DIR = (SQL_DIR / f for f in ("model", "serve", "regress", "checks"))
# the alerts view reads alert_state, the Delta table people write (`make ack`): installed after it
ALERTS_VIEW = REGRESS_DIR / "alerts" / "alerts.sql"
# What the build registers before the models: the Delta snapshot and the lookup tables.
LOOKUP_TABLES = (
    "regression_settings",
    "liger_version_order",
    "warehouse_run",
    "commit_kernel",
    "commit_harness",
    "freshness_settings",
)
SERVE_INPUTS = tuple(f"delta_{t}" for t in SCHEMAS) + LOOKUP_TABLES
# made by Python after the regression models (regress/change_points.py); views may read it
PYTHON_TABLES = ("change_points",)


def serve_models() -> list[SqlModel]:
    return load_models(SERVE_DIR, SERVE_INPUTS)


def regress_models() -> list[SqlModel]:
    """The regression models users query (sql/regress), in dependency order; the alerts view apart."""
    serve = [m.name for m in serve_models()]
    return load_models(REGRESS_DIR, (*SERVE_INPUTS, *serve, *PYTHON_TABLES), skip=(ALERTS_VIEW,))


def alerts_view() -> SqlModel:
    return read_model(ALERTS_VIEW)


def check_names() -> list[str]:
    return sorted(p.stem for p in CHECKS_DIR.glob("*.sql"))


def check_model(name: str) -> SqlModel:
    return read_model(CHECKS_DIR / f"{name}.sql")


def model_files(folder: Path) -> list[Path]:
    """A folder's model files, its sub-folders' included (sql/regress/<question>/)."""
    return sorted(folder.rglob("*.sql"))
