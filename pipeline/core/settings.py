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


def warehouse_uri() -> str:
    """Where the Delta tables live: a local folder or s3://bucket/prefix (LIGER_WAREHOUSE)."""
    value = os.environ.get("LIGER_WAREHOUSE") or str(PROJECT_ROOT / "warehouse")
    return value if "://" in value else str(Path(value).resolve())


def warehouse_dir() -> Path:
    """The local folder: staging, liger.duckdb, reports. The warehouse folder itself when it is
    local; LIGER_LOCAL_DIR (default warehouse/ in the project) when the tables are on S3."""
    uri = warehouse_uri()
    if "://" in uri:
        return Path(os.environ.get("LIGER_LOCAL_DIR") or PROJECT_ROOT / "warehouse").resolve()
    return Path(uri)


def duckdb_path() -> Path:
    return warehouse_dir() / "liger.duckdb"


# DuckDB memory per connection. Two readers run at once and one build after them, so the
# process stays under ~4 GB at 10 M rows; beyond the limit DuckDB spills to disk.
READER_MEMORY = os.environ.get("LIGER_READER_MEMORY", "1500MB")
BUILD_MEMORY = os.environ.get("LIGER_BUILD_MEMORY", "3GB")


def duckdb_config(temp_dir: Path, memory_limit: str) -> dict:
    """Connection settings: explicit spill folder (never the CWD's .tmp), bounded memory."""
    return {"temp_directory": str(temp_dir), "memory_limit": memory_limit, "preserve_insertion_order": False}
