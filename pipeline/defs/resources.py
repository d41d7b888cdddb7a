"""The one resource: where raw inputs are read and the warehouse is written."""

import os
from pathlib import Path

import dagster as dg

from pipeline.config import data_raw_dir, git_repo_dir, lock_timeout_s, warehouse_dir, warehouse_uri
from pipeline.stage.store import StagingStore
from pipeline.store.warehouse import Warehouse


class WarehouseResource(dg.ConfigurableResource):
    """Explicit fields win; an empty field falls back to the environment, read in pipeline.config
    (LIGER_DATA_RAW / LIGER_WAREHOUSE / LIGER_GIT_REPO, else data_raw/ and warehouse/ in the project)."""

    data_raw: str = ""
    # A local folder or s3://bucket/prefix; "" means env LIGER_WAREHOUSE, else warehouse/.
    warehouse: str = ""
    # Staging, liger.duckdb and reports when `warehouse` is on S3 ("" = env LIGER_LOCAL_DIR / warehouse/).
    local_dir: str = ""
    # Local Liger-Kernel clone to backfill from; "" means env LIGER_GIT_REPO, and unset means no backfill.
    git_repo: str = ""

    def data_raw_path(self) -> Path:
        # realpath, not resolve(): a root that is a symlink loop reaches discovery, which refuses it by name
        return Path(os.path.realpath(self.data_raw)) if self.data_raw else data_raw_dir()

    def warehouse_uri(self) -> str:
        if not self.warehouse:
            return warehouse_uri()
        return self.warehouse if "://" in self.warehouse else str(Path(self.warehouse).resolve())

    def warehouse_path(self) -> Path:
        """The local folder (staging, liger.duckdb, reports)."""
        if self.local_dir:
            return Path(self.local_dir).resolve()
        uri = self.warehouse_uri()
        return Path(uri) if "://" not in uri else warehouse_dir()

    def bisect_path(self) -> Path:
        """Where `make bisect` writes its results and runs (read back by the ingest: commit_runs.py)."""
        return self.warehouse_path() / "bisect"

    def git_repo_path(self) -> Path | None:
        return Path(self.git_repo).expanduser() if self.git_repo else git_repo_dir()

    def git_blob_cache(self) -> Path:
        return self.warehouse_path() / "git_blobs"

    def open(self) -> Warehouse:
        return Warehouse(self.warehouse_uri(), self.warehouse_path(), lock_timeout=lock_timeout_s())

    def staging(self) -> StagingStore:
        return StagingStore(self.open().staging)


def warehouse_resource() -> WarehouseResource:
    return WarehouseResource()
