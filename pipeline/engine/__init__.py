"""The SQL model engine: a model file's header (`header.py`), a folder's dependency order
(`graph.py`), making models on a target (`run.py`: DuckDB, or Spark's target in pipeline/spark) and
the incremental refresh of stored models over new facts (`incremental.py`). Every caller that runs
models goes through it: the model stage, the DuckDB build, `pipeline.connect()`, compare, Spark."""

from pipeline.engine.graph import load_models, order_models
from pipeline.engine.header import ModelError, ModelHeader, PythonModel, SqlModel, read_model
from pipeline.engine.run import DuckScripts, DuckTarget, Target, create_view, naming, run_models

__all__ = [
    "DuckScripts",
    "DuckTarget",
    "ModelError",
    "ModelHeader",
    "PythonModel",
    "SqlModel",
    "Target",
    "create_view",
    "load_models",
    "naming",
    "order_models",
    "read_model",
    "run_models",
]
