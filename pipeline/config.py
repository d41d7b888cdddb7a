"""Where things live. Env vars win so tests and users can point the pipeline anywhere."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SQL_DIR = PROJECT_ROOT / "sql"

API_VERSION = "kernelindex.dev/v1alpha1"

# Guards against hostile input: a line or header beyond these goes to quarantine, never into memory.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_COLUMNS = 512
MAX_JSON_FILE_BYTES = 512 * 1024 * 1024
MAX_JSON_DEPTH = 64


# Environment variables: read here and nowhere else, when asked (never at import), so a process or a
# test that sets one after importing the pipeline is still obeyed.
DATA_RAW_ENV = "LIGER_DATA_RAW"
WAREHOUSE_ENV = "LIGER_WAREHOUSE"
GIT_REPO_ENV = "LIGER_GIT_REPO"
READER_MEMORY_ENV = "LIGER_READER_MEMORY"
BUILD_MEMORY_ENV = "LIGER_BUILD_MEMORY"
LOCK_TIMEOUT_ENV = "LIGER_LOCK_TIMEOUT_S"
LOCAL_DIR_ENV = "LIGER_LOCAL_DIR"


def data_raw_dir() -> Path:
    return Path(os.environ.get(DATA_RAW_ENV, PROJECT_ROOT / "data_raw")).resolve()


def warehouse_uri() -> str:
    """Where the Delta tables live: a local folder or s3://bucket/prefix (LIGER_WAREHOUSE)."""
    value = os.environ.get(WAREHOUSE_ENV) or str(PROJECT_ROOT / "warehouse")
    return value if "://" in value else str(Path(value).resolve())


def warehouse_dir() -> Path:
    """The local folder: staging, liger.duckdb, reports. The warehouse folder itself when it is
    local; LIGER_LOCAL_DIR (default warehouse/ in the project) when the tables are on S3."""
    uri = warehouse_uri()
    if "://" in uri:
        return Path(os.environ.get(LOCAL_DIR_ENV) or PROJECT_ROOT / "warehouse").resolve()
    return Path(uri)


def duckdb_path() -> Path:
    return warehouse_dir() / "liger.duckdb"


def git_repo_dir() -> Path | None:
    """A local Liger-Kernel clone to backfill from; None (no backfill) when unset or blank."""
    value = os.environ.get(GIT_REPO_ENV, "").strip()
    return Path(value).expanduser() if value else None


# DuckDB memory per connection. Two readers run at once and one build after them, so the
# process stays under ~4 GB at 10 M rows; beyond the limit DuckDB spills to disk.
def reader_memory() -> str:
    return os.environ.get(READER_MEMORY_ENV, "1500MB")


def build_memory() -> str:
    return os.environ.get(BUILD_MEMORY_ENV, "3GB")


def lock_timeout_s() -> float:
    """How long a run waits for the warehouse publication lock before it gives up."""
    return float(os.environ.get(LOCK_TIMEOUT_ENV, "600"))

