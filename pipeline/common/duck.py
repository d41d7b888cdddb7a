"""The one way this project opens DuckDB: bounded memory, an explicit spill folder, UTC, and
(for a warehouse on S3) an fsspec filesystem so `read_parquet('s3://…')` works without httpfs."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import duckdb

from pipeline.config import object_store


def is_remote(uri: str) -> bool:
    return "://" in uri and not uri.startswith("file://")


def s3_filesystem():
    """fsspec S3 filesystem from the standard AWS variables (endpoint, keys, region), which answers
    the size of a file it has listed (``remember``) without asking the bucket again."""
    import s3fs  # only needed for a warehouse on object storage

    class ListedS3FileSystem(s3fs.S3FileSystem):
        """Delta's data files are immutable: a file once listed keeps its size, so its ``info`` needs
        no HEAD request. Anything not listed is asked for as usual (never answered from a listing
        that may predate it, which fsspec's own listings cache would do)."""

        def remember(self, root: str) -> None:
            self._listed = getattr(self, "_listed", {}) | self.find(root, detail=True)
            self.invalidate_cache()

        async def _info(self, path, *args, **kwargs):
            hit = getattr(self, "_listed", {}).get(self._strip_protocol(path))
            if hit is not None and not args and not kwargs:
                return hit
            return await super()._info(path, *args, **kwargs)

    return ListedS3FileSystem(**object_store().s3fs_kwargs())


def _warm_listing(fs, remote_root: str) -> None:
    """List the warehouse's objects once (a few LIST requests per thousand files): fsspec then
    answers each listed file's size without a HEAD request per file and per open."""
    # an empty or unreadable prefix is not an error here: the reads that follow say what is wrong
    with suppress(FileNotFoundError, PermissionError):
        fs.remember(remote_root.split("://", 1)[1].rstrip("/"))


def connect(
    database: str | Path = ":memory:",
    *,
    temp_dir: Path | None = None,
    memory_limit: str | None = None,
    read_only: bool = False,
    remote_root: str | None = None,
    threads: int | None = None,
) -> duckdb.DuckDBPyConnection:
    config: dict = {"preserve_insertion_order": False}
    if temp_dir is not None:
        # DuckDB creates the folder itself when it first spills, but not its parents.
        temp_dir.parent.mkdir(parents=True, exist_ok=True)
        config["temp_directory"] = str(temp_dir)
    if memory_limit:
        config["memory_limit"] = memory_limit
    if threads:
        config["threads"] = threads
    con = duckdb.connect(str(database), read_only=read_only, config=config)
    con.execute("set enable_progress_bar = false")
    # Delta stores timestamps UTC-adjusted (protocol 1/2 keeps every reader able to open the tables);
    # UTC here makes TIMESTAMPTZ <-> TIMESTAMP conversions the identity.
    con.execute("set TimeZone = 'UTC'")
    if remote_root and is_remote(remote_root):
        fs = s3_filesystem()
        # a second connection to an open database shares its filesystems (readers beside each other)
        if fs.protocol[0] not in con.list_filesystems():
            con.register_filesystem(fs)
        _warm_listing(fs, remote_root)
        # Delta's data files are immutable (a new version writes new files): their footers and
        # blocks, once read, need no second request. Without these and the listing, every view
        # bound over the bucket asked again for each file's size and footer: `pipeline.connect(run=N)`
        # binds ~30 views over chains of views, one HEAD per file per bind (bench/HISTORY.md).
        con.execute("set parquet_metadata_cache = true")
        con.execute("set validate_external_file_cache = 'NO_VALIDATION'")
    return con


def write_parquet(con: duckdb.DuckDBPyConnection, sql: str, params: dict, out: str | Path) -> None:
    """``sql``'s rows into the Parquet file ``out`` (zstd), the path a parameter, never pasted into SQL.
    One COPY statement: the relation API's ``sql(...).write_parquet`` parses and binds a statement
    twice and tokenizes its text in Python, a third of a small file's staging."""
    con.execute(f"copy ({sql}) to $parquet_out (format parquet, compression zstd)", {**params, "parquet_out": str(out)})


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: dict | None = None):
    """First column of the first row, with the result fully consumed (DuckDB 2 refuses new work on
    a connection whose last result is still open)."""
    rows = con.execute(sql, params or {}).fetchall()
    return rows[0][0] if rows else None


def has_tables(con: duckdb.DuckDBPyConnection, *names: str) -> bool:
    """Whether every one of ``names`` is a table of the connection's current schema and database."""
    found = scalar(
        con,
        "select count(distinct table_name) from duckdb_tables() where list_contains($names, table_name) "
        "and schema_name = current_schema() and database_name = current_database()",
        {"names": list(names)},
    )
    return found == len(set(names))


# One spill folder for every reader a process has open at once: DuckDB refuses a second open of a
# file with another configuration, and the dashboard reads liger.duckdb beside the report.
_READERS = {"open": 0, "lock": threading.Lock()}


def _reader_spill() -> Path:
    return Path(tempfile.gettempdir()) / f"liger-reader-{os.getpid()}"


@contextmanager
def open_readonly(db_path: str | Path, remote_root: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The published ``liger.duckdb``, read-only (its tables may be on S3), for the pipeline's own
    readers (report, dashboard). Bounded like the merge (`config.merge_memory`) and spilling to a
    folder of the process's own, removed when its last reader closes: unbounded, DuckDB takes up to
    80 % of the RAM for one aggregate, and the dashboard's over a large warehouse made the run's peak
    several times the bound. Readers open at once share the database and its bound."""
    from pipeline.config import merge_memory, warehouse_uri

    root = remote_root if remote_root is not None else warehouse_uri()
    with _READERS["lock"]:
        _READERS["open"] += 1
    try:
        con = connect(
            Path(db_path), read_only=True, remote_root=root, memory_limit=merge_memory(), temp_dir=_reader_spill() / "d"
        )
        try:
            yield con
        finally:
            con.close()
    finally:
        with _READERS["lock"]:
            _READERS["open"] -= 1
            if not _READERS["open"]:
                shutil.rmtree(_reader_spill(), ignore_errors=True)
