"""Every call from the dashboard into ``pipeline.core``, in one place.

``pipeline/core`` is being reorganised: when its modules move, re-point the imports below and
nothing else in ``pipeline.analyze.site`` changes.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.core import duck
from pipeline.core.report_queries import FLAGGED_VERDICTS, SEVERITY_SQL, VersionCoverage, coverage_by_version
from pipeline.core.settings import duckdb_path, warehouse_dir, warehouse_uri
from pipeline.core.versions import parse_version

__all__ = [
    "FLAGGED_VERDICTS", "SEVERITY_SQL", "VersionCoverage", "coverage_by_version", "default_duckdb_path",
    "default_out_dir", "open_readonly", "parse_version",
]


def open_readonly(db_path: str | Path) -> duckdb.DuckDBPyConnection:
    """The published ``liger.duckdb``, read-only, the way ``make sql`` opens it (tables may be on S3)."""
    return duck.connect(Path(db_path), read_only=True, remote_root=warehouse_uri())


def default_duckdb_path() -> Path:
    return duckdb_path()


def default_out_dir() -> Path:
    return warehouse_dir() / "site"
