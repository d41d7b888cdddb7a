"""The one resource: where raw inputs are read and the warehouse is written."""


from pathlib import Path

import dagster as dg
from filelock import Timeout
from pydantic import PrivateAttr

from pipeline.core.git_history import git_repo_from_env
from pipeline.core.settings import data_raw_dir, warehouse_dir
from pipeline.core.warehouse import Warehouse


class WarehouseResource(dg.ConfigurableResource):
    """Paths default to LIGER_DATA_RAW / LIGER_WAREHOUSE, else data_raw/ and warehouse/ in the project."""

    data_raw: str = ""
    warehouse: str = ""
    # Local Liger-Kernel clone to backfill from; "" means env LIGER_GIT_REPO, and unset means no backfill.
    git_repo: str = ""

    _run_lock = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """One run at a time per warehouse: a second run waits here, then fails with a clear message."""
        lock = self.open().run_lock()
        if context.log:
            context.log.info(f"taking the warehouse run lock {lock.lock_file}")
        try:
            lock.acquire()
        except Timeout as exc:
            raise dg.Failure(
                f"another run holds the warehouse lock {lock.lock_file} (waited {lock.timeout:.0f} s); "
                "the warehouse was not touched; retry when that run has finished"
            ) from exc
        self._run_lock = lock

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._run_lock is not None:
            self._run_lock.release()
            self._run_lock = None

    def data_raw_path(self) -> Path:
        return Path(self.data_raw).resolve() if self.data_raw else data_raw_dir()

    def warehouse_path(self) -> Path:
        return Path(self.warehouse).resolve() if self.warehouse else warehouse_dir()

    def git_repo_path(self) -> Path | None:
        return Path(self.git_repo).expanduser() if self.git_repo else git_repo_from_env()

    def git_blob_cache(self) -> Path:
        return self.warehouse_path() / "git_blobs"

    def open(self) -> Warehouse:
        return Warehouse(self.warehouse_path())


def warehouse_resource() -> WarehouseResource:
    return WarehouseResource()
