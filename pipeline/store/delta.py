"""Delta Lake tables on a local folder or on S3-compatible object storage (delta-rs, no JVM).

One `DeltaStore` per warehouse: ``<root>/tables/<name>`` is a Delta table. Commits carry the run
that made them (``liger.run_id``) in their commit info, so a table's history shows the runs that
changed it. Readers list a snapshot's Parquet files from the Delta log (``files``) and hand them
to DuckDB's ``read_parquet`` or Polars; the delta-rs Arrow readers are avoided on purpose (they
aborted the interpreter at exit when tried here).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, PostCommitHookProperties, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from pipeline.common.duck import is_remote
from pipeline.config import object_store

RUN_ID_KEY = "liger.run_id"

# DuckDB reads one Parquet row group per thread: delta-rs' default of 1 Mi rows a group made a
# table of up to a million facts one group, read on one core. DuckDB's own group size lets every core
# read, for a few more bytes.
ROW_GROUP_ROWS = 122_880


def _writer_properties() -> WriterProperties:
    return WriterProperties(max_row_group_size=ROW_GROUP_ROWS)


__all__ = ["DeltaStore", "CommitFailedError", "is_remote", "storage_options"]


def storage_options(uri: str) -> dict[str, str]:
    """Object-store settings from the standard AWS variables; commits use conditional put
    (If-None-Match), which S3 and moto honour, so concurrent writers cannot overwrite a commit."""
    if not is_remote(uri):
        return {}
    return object_store().delta_options()


def _read_snapshot(dt: DeltaTable) -> tuple[tuple[str, ...], int]:
    """A loaded table's Parquet files and rows, from its log."""
    # delta-rs percent-encodes the URIs it lists ("my%20dir"); DuckDB and fsspec want the path.
    files = tuple(sorted(unquote(u) for u in dt.file_uris()))
    # through the C stream: pa.table() on a foreign object first asks whether it is a pandas
    # frame, which imports pandas (a quarter of a second of a nothing-new run, when installed)
    actions = pa.RecordBatchReader.from_stream(dt.get_add_actions(flatten=True)).read_all()
    return files, sum(c or 0 for c in actions.column("num_records").to_pylist())


@functools.lru_cache(maxsize=512)
def _local_snapshot(uri: str, version: int, _commit_file: tuple[int, int, int]) -> tuple[tuple[str, ...], int]:
    """One committed version of a local table, for the whole process: each step of a run opens the
    warehouse again, and re-read the same versions' logs: dozens of table loads a run. Keyed by the
    identity of the version's commit file (inode, size, mtime), so a table
    deleted and made again at the same path never reads an old entry."""
    return _read_snapshot(DeltaTable(uri, version=version))


def _newest_local_version(uri: str) -> int | None:
    """The newest commit of a local table, as delta-rs finds it: the highest ``<version>.json`` of
    its log (a commit file appears whole: it is written aside and renamed into place)."""
    try:
        names = os.listdir(Path(uri) / "_delta_log")
    except OSError:
        return None
    versions = [int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit()]
    return max(versions, default=None)


def _commit_file_identity(uri: str, version: int) -> tuple[int, int, int] | None:
    try:
        st = os.stat(Path(uri) / "_delta_log" / f"{version:020d}.json")
    except OSError:  # a log cleaned up after a checkpoint: read the table itself
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class WarehouseTableError(RuntimeError):
    """A Delta table of the warehouse that cannot be read or written: the message names the table,
    where it lives and what to do, instead of delta-rs' or the OS's bare words."""

    def __init__(self, table: str, uri: str, exc: BaseException):
        if isinstance(exc, PermissionError):
            what = "the warehouse is not writable here (read-only folder or file)"
            todo = "run with write access to it, or point LIGER_WAREHOUSE at a writable folder"
        elif isinstance(exc, DeltaError | ValueError):
            what = "its Delta log is unreadable (a corrupt or truncated commit file under _delta_log/)"
            todo = (
                "restore _delta_log from a backup, or rebuild the warehouse from the sources (make clean && make run)"
            )
        else:
            what = "it could not be read or written"
            todo = "check the disk and the storage settings"
        said = (str(exc).strip().splitlines() or [""])[0]  # delta-rs appends a native backtrace
        super().__init__(f"warehouse table '{table}' at {uri}: {what}: {type(exc).__name__}: {said}. To fix: {todo}")
        self.table = table


def _names_its_table(method):
    """A DeltaStore method whose failures name the table (concurrency and absence stay as they are:
    callers decide on those)."""

    @functools.wraps(method)
    def wrapper(self, table: str, *args, **kwargs):
        try:
            return method(self, table, *args, **kwargs)
        except (CommitFailedError, TableNotFoundError, WarehouseTableError):
            raise
        except (DeltaError, OSError, ValueError) as exc:
            raise WarehouseTableError(table, self.uri(table), exc) from exc

    return wrapper


@dataclass(frozen=True)
class DeltaStore:
    root: str  # local absolute path or s3://bucket/prefix
    # A committed version never changes: its file list and row count are read from the log once
    # (here for object storage; a local table's versions once per process, `_local_snapshot`).
    _snapshots: dict = field(default_factory=dict, compare=False, repr=False)

    def uri(self, table: str) -> str:
        return f"{self.root.rstrip('/')}/tables/{table}"

    @property
    def options(self) -> dict[str, str]:
        return storage_options(self.root)

    @_names_its_table
    def open(self, table: str, version: int | None = None) -> DeltaTable | None:
        try:
            dt = DeltaTable(self.uri(table), storage_options=self.options)
        except TableNotFoundError:
            return None
        if version is not None:
            dt.load_as_version(version)
        return dt

    def version(self, table: str) -> int | None:
        dt = self.open(table)
        return None if dt is None else dt.version()

    @_names_its_table
    def _snapshot(self, table: str, version: int | None) -> tuple[tuple[str, ...], int] | None:
        if not is_remote(self.root):
            newest = version if version is not None else _newest_local_version(self.uri(table))
            identity = None if newest is None else _commit_file_identity(self.uri(table), newest)
            if identity is not None:
                return _local_snapshot(self.uri(table), newest, identity)
        if version is not None and (table, version) in self._snapshots:
            return self._snapshots[(table, version)]
        dt = self.open(table, version)
        if dt is None:
            return None
        snap = _read_snapshot(dt)
        if version is not None:
            self._snapshots[(table, version)] = snap
        return snap

    def files(self, table: str, version: int | None = None) -> list[str]:
        """Parquet files of one snapshot (latest, or ``version``), as absolute paths or URIs."""
        snap = self._snapshot(table, version)
        return [] if snap is None else list(snap[0])

    def row_count(self, table: str, version: int | None = None) -> int | None:
        """Rows of one snapshot, from the Delta log's per-file statistics (no data file is read)."""
        snap = self._snapshot(table, version)
        return None if snap is None else snap[1]

    @_names_its_table
    def schema(self, table: str) -> pa.Schema | None:
        dt = self.open(table)
        return None if dt is None else pa.schema(dt.schema().to_arrow())

    @_names_its_table
    def write(self, table: str, data, *, mode: str, run_id: str) -> int:
        """Append or overwrite in one commit; returns the new version. ``data`` is an Arrow table or
        a RecordBatchReader, so a large result streams from DuckDB without being held whole."""
        meta = {RUN_ID_KEY: run_id}
        write_deltalake(
            self.uri(table),
            data,
            mode=mode,
            storage_options=self.options,
            schema_mode="overwrite" if mode == "overwrite" else None,
            writer_properties=_writer_properties(),
            commit_properties=CommitProperties(custom_metadata=meta),
            # Checkpoints every 100 commits keep the log cheap to read (delta-rs default interval).
            post_commithook_properties=PostCommitHookProperties(create_checkpoint=True),
        )
        return self.version(table)

    @_names_its_table
    def insert_new(self, table: str, row: pa.Table, *, key: str, run_id: str) -> bool:
        """Insert ``row`` unless a row with its ``key`` exists, in one commit (a MERGE, which conflicts
        with a racing writer's commit); False when the key was taken."""
        dt = self.open(table)
        if dt is None:
            self.write(table, row, mode="append", run_id=run_id)
            return True
        metrics = (
            dt.merge(
                row,
                predicate=f"t.{key} = s.{key}",
                source_alias="s",
                target_alias="t",
                commit_properties=CommitProperties(custom_metadata={RUN_ID_KEY: run_id}),
                post_commithook_properties=PostCommitHookProperties(create_checkpoint=True),
            )
            .when_not_matched_insert_all()
            .execute()
        )
        return metrics.get("num_target_rows_inserted", 0) == 1

    @_names_its_table
    def history(self, table: str) -> list[dict]:
        dt = self.open(table)
        return [] if dt is None else dt.history()

    @_names_its_table
    def compact(self, table: str, *, run_id: str, min_files: int) -> bool:
        """Merge-on-read leaves one small file per run; compact once ``min_files`` pile up."""
        dt = self.open(table)
        if dt is None or len(dt.file_uris()) < min_files:
            return False
        dt.optimize.compact(
            writer_properties=_writer_properties(),
            commit_properties=CommitProperties(custom_metadata={RUN_ID_KEY: run_id, "liger.operation": "compact"}),
        )
        return True

    def vacuum(self, tables: Iterable[str], retention: timedelta) -> dict[str, int]:
        """Delete files that no version newer than ``retention`` needs (time travel ends there)."""
        removed = {}
        for t in tables:
            dt = self.open(t)
            if dt is None:
                continue
            hours = int(retention.total_seconds() // 3600)
            removed[t] = len(dt.vacuum(retention_hours=hours, dry_run=False, enforce_retention_duration=False))
        return removed
