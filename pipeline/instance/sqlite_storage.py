"""The Dagster instance of `make run`, the UI and the daemon (config/dagster.yaml `instance_class`):
Dagster's own, with its default SQLite storage keeping its SQLAlchemy engines, and their connections,
for the life of the process.

Dagster's SQLite storages build a new engine for every connection they open and close the
connection after each use; writing one event opens two or three (the run's database, the asset
index). Its databases are in WAL mode, where closing a database's last connection checkpoints the
log into the file and deletes it: a checkpoint for every event, which added up to a large part of a
small run. Kept connections only commit. Each is opened with `synchronous=NORMAL`, SQLite's advice for WAL: a commit is
durable once the log is checkpointed, not at every event, so a power cut may lose the last events
but never corrupts a database, and a killed process loses nothing it committed.

Locking between processes (the daemon, the UI, `make run`) is SQLite's own, per transaction: a
kept connection that is not in a transaction reads what another process committed since. A wipe
deletes the run databases' files, so it first closes the connections to them. The files are
Dagster's default ones under the instance's folder, so an instance without this class reads them.
Only the default storage changes: a dagster.yaml with its own `storage` (deploy/dagster.yaml,
PostgreSQL) uses that. Opening a stamped database, Dagster's own check reads every migration script to
learn the head revision and then changes nothing: here such a database is opened as it is.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import closing, contextmanager

import sqlalchemy.exc as db_exc
import yaml
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from dagster import DagsterInstance
from dagster._core.instance.ref import InstanceRef
from dagster._core.storage.base_storage import DagsterStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.event_log.sqlite import sqlite_event_log
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME, SqliteEventLogStorage
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.schedules.sqlite.sqlite_schedule_storage import SqliteScheduleStorage
from dagster._core.storage.sql import create_engine, get_alembic_config
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS, create_db_conn_string
from dagster._core.storage.sqlite_storage import (
    DagsterSqliteStorage,
    _event_logs_directory,
    _runs_directory,
    _schedule_directory,
)
from dagster._serdes import ConfigurableClassData
from sqlalchemy import event, text

__all__ = ["LigerDagsterInstance", "SqliteStorageKeepingEngines"]

# Event log engines kept at most, least recently used dropped first: one per run's database, so a
# long-lived process (the daemon, the UI) that reads thousands of runs keeps a few dozen engines
# and their open files.
MAX_ENGINES = 32


def _synchronous_normal(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _engine_keeping_connections(conn_string: str):
    """SQLAlchemy's default pool for a SQLite file (QueuePool: connections are kept and shared
    between threads, one at a time), each connection opened with ``synchronous=NORMAL``."""
    engine = create_engine(
        conn_string, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False}
    )
    event.listen(engine, "connect", _synchronous_normal)
    return engine


@functools.cache
def _event_log_scripts() -> ScriptDirectory:
    """Dagster's event-log migration scripts, read once per process: alembic parses every script file
    each time it is asked for the head revision (twice for a new database)."""
    return ScriptDirectory.from_config(get_alembic_config(sqlite_event_log.__file__))


class _EventLogKeepingEngines(SqliteEventLogStorage):
    def __init__(self, base_dir: str, inst_data=None):
        self._engines: OrderedDict[str, object] = OrderedDict()
        self._engines_lock = threading.Lock()  # not _db_lock: has_table runs while _db_lock is held
        self._asset_key_columns: set[str] = set()
        super().__init__(base_dir, inst_data=inst_data)

    def _engine(self, shard: str):
        with self._engines_lock:
            engine = self._engines.pop(shard, None)
            if engine is None:
                engine = _engine_keeping_connections(self.conn_string_for_shard(shard))
            self._engines[shard] = engine
            while len(self._engines) > MAX_ENGINES:
                self._engines.popitem(last=False)[1].dispose()
            return engine

    @contextmanager
    def _connect(self, shard: str) -> Iterator:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def _initdb(self, engine, for_index_shard: bool = False) -> None:
        """Dagster's check of a database, with the migration scripts read only to stamp a new one,
        once per process: Dagster's own path parses every script to learn the head revision, at the
        index database and twice for each run's new database.
        A stamped database is left as it is (as Dagster does); a new one gets Dagster's tables, WAL
        and the head revision; one with tables but no stamp (an old index), or one another process
        is making at the same moment (SQLite raises), goes through Dagster's own path."""
        try:
            with engine.connect() as conn:
                context = MigrationContext.configure(conn)
                if context.get_current_revision() is not None:
                    return
                if not engine.dialect.get_table_names(conn):
                    SqlEventLogStorageMetadata.create_all(conn)
                    conn.execute(text("PRAGMA journal_mode=WAL;"))
                    context.stamp(_event_log_scripts(), "head")
                    conn.commit()
                    return
        except (db_exc.DatabaseError, sqlite3.DatabaseError):
            pass
        super()._initdb(engine, for_index_shard)

    def _has_asset_key_col_on_connection(self, conn, column_name: str) -> bool:
        # Dagster inspects the asset index's columns at every asset event (a third of writing one);
        # a schema migration only adds columns, so a column once seen is there for good
        if column_name in self._asset_key_columns:
            return True
        found = super()._has_asset_key_col_on_connection(conn, column_name)
        if found:
            self._asset_key_columns.add(column_name)
        return found

    def has_table(self, table_name: str) -> bool:
        engine = self._engine(INDEX_SHARD_NAME)
        with engine.connect() as conn:
            return bool(engine.dialect.has_table(conn, table_name))

    def _dispose_engines(self) -> None:
        with self._engines_lock:
            while self._engines:
                self._engines.popitem()[1].dispose()

    def wipe(self) -> None:
        self._dispose_engines()  # a kept connection would go on writing to a deleted file
        super().wipe()

    def dispose(self) -> None:
        super().dispose()
        self._dispose_engines()


def _stamped(path: str, tables: tuple[str, ...]) -> bool:
    """Whether the SQLite database ``path`` has Dagster's alembic revision and ``tables``: read by the
    standard library, without an engine or Dagster's migration scripts."""
    if not os.path.exists(path):
        return False
    try:
        with closing(sqlite3.connect(path, timeout=SQLITE_BUSY_TIMEOUT_SECONDS)) as con:
            names = {row[0] for row in con.execute("select name from sqlite_master where type = 'table'")}
            if not {"alembic_version", *tables} <= names:
                return False
            return con.execute("select count(*) from alembic_version").fetchone()[0] > 0
    except sqlite3.Error:
        return False


class _OpenedAsStamped:
    """`from_local` of a Dagster SQLite storage of one database (``_DB``.db holding ``_TABLES``). Dagster's
    check of the database parses every migration script to learn the head revision,
    and with a revision stamped changes nothing (it never migrates here): a stamped database with its
    tables is opened as it is, any other by Dagster's path."""

    _DB: str
    _TABLES: tuple[str, ...]

    @classmethod
    def from_local(cls, base_dir: str, inst_data: ConfigurableClassData | None = None):
        if _stamped(os.path.join(base_dir, f"{cls._DB}.db"), cls._TABLES):
            return cls(create_db_conn_string(base_dir, cls._DB), inst_data)
        return super().from_local(base_dir, inst_data)


class _RunStorageKeepingEngine(_OpenedAsStamped, SqliteRunStorage):
    _DB, _TABLES = "runs", ("runs", "instance_info")

    def __init__(self, conn_string: str, inst_data: ConfigurableClassData | None = None):
        super().__init__(conn_string, inst_data)
        self._kept_engine = _engine_keeping_connections(conn_string)

    @contextmanager
    def connect(self) -> Iterator:
        with self._kept_engine.connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        super().dispose()
        self._kept_engine.dispose()


class _ScheduleStorageChecked(_OpenedAsStamped, SqliteScheduleStorage):
    _DB, _TABLES = "schedules", ("jobs", "job_ticks")


class SqliteStorageKeepingEngines(DagsterSqliteStorage):
    """Dagster's default storage (`DagsterSqliteStorage`: runs, event log, schedules under one folder)
    with the run storage and the event log keeping their engines."""

    def __init__(self, base_dir: str, inst_data: ConfigurableClassData | None = None):
        # not DagsterSqliteStorage.__init__, which would open Dagster's own storages first
        self.base_dir = base_dir
        self._run_storage = _RunStorageKeepingEngine.from_local(_runs_directory(base_dir))
        self._event_log_storage = _EventLogKeepingEngines(_event_logs_directory(base_dir))
        self._schedule_storage = _ScheduleStorageChecked.from_local(_schedule_directory(base_dir))
        self._inst_data = inst_data
        DagsterStorage.__init__(self)

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        return cls.from_local(inst_data=inst_data, **config_value)


class LigerDagsterInstance(DagsterInstance):
    """Dagster's instance whose default storage is :class:`SqliteStorageKeepingEngines` in the
    instance's own folder (a storage's config alone cannot name that folder)."""

    @classmethod
    def config_schema(cls):
        return {}

    @classmethod
    def config_defaults(cls, base_dir: str):
        storage = ConfigurableClassData(
            __name__, SqliteStorageKeepingEngines.__name__, yaml.dump({"base_dir": base_dir})
        )
        return {**InstanceRef.config_defaults(base_dir), "storage": storage}
