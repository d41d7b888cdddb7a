"""The one resource: where raw inputs are read and the warehouse is written."""


from pathlib import Path

import dagster as dg

from pipeline.core.settings import data_raw_dir, git_repo_dir, warehouse_dir
from pipeline.core.warehouse import Warehouse


class WarehouseResource(dg.ConfigurableResource):
    """Explicit fields win; an empty field falls back to the environment, read in pipeline.core.settings
    (LIGER_DATA_RAW / LIGER_WAREHOUSE / LIGER_GIT_REPO, else data_raw/ and warehouse/ in the project)."""

    data_raw: str = ""
    warehouse: str = ""
    # Local Liger-Kernel clone to backfill from; "" means env LIGER_GIT_REPO, and unset means no backfill.
    git_repo: str = ""

    def data_raw_path(self) -> Path:
        return Path(self.data_raw).resolve() if self.data_raw else data_raw_dir()

    def warehouse_path(self) -> Path:
        return Path(self.warehouse).resolve() if self.warehouse else warehouse_dir()

    def git_repo_path(self) -> Path | None:
        return Path(self.git_repo).expanduser() if self.git_repo else git_repo_dir()

    def git_blob_cache(self) -> Path:
        return self.warehouse_path() / "git_blobs"

    def open(self) -> Warehouse:
        return Warehouse(self.warehouse_path())


def warehouse_resource() -> WarehouseResource:
    return WarehouseResource()
