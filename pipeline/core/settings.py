"""Where things live. Env vars win so tests and users can point the pipeline anywhere."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SQL_DIR = PROJECT_ROOT / "sql"

API_VERSION = "kernelindex.dev/v1alpha1"

# Guards against hostile input: a line or header beyond these goes to quarantine, never into memory.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_COLUMNS = 512
MAX_JSON_FILE_BYTES = 512 * 1024 * 1024
MAX_JSON_DEPTH = 64


def data_raw_dir() -> Path:
    return Path(os.environ.get("LIGER_DATA_RAW", PROJECT_ROOT / "data_raw")).resolve()


def warehouse_dir() -> Path:
    return Path(os.environ.get("LIGER_WAREHOUSE", PROJECT_ROOT / "warehouse")).resolve()


def duckdb_path() -> Path:
    return warehouse_dir() / "liger.duckdb"
