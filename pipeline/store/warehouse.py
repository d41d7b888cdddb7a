"""Warehouse layout, the run lock, and the run log that makes a run's commits visible.

    <root>/tables/<name>/            Delta tables (root: a local folder or s3://bucket/prefix)
    <root>/tables/warehouse_run/     one row per run that changed the warehouse: the version of
                                     every table after it (the published state)
    <local>/staging/v3/<kind>/<sha256>.parquet   staged file contents (always local)
    <local>/liger.duckdb                          views over the published state (always local)
    <local>/.lock                                 the run lock for a local warehouse

A run commits each table it changes, then appends its row to `warehouse_run`: that row is the
moment its changes become visible to every reader this project gives (liger.duckdb,
`pipeline.connect()`, the asset checks). A run killed before it leaves commits that no run
row names; the next run restores those tables to the published versions and redoes the work.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
from filelock import FileLock, Timeout

from pipeline.common.duck import connect
from pipeline.contracts.tables import RUN_LOG as RUN_LOG_TABLE
from pipeline.contracts.tables import TABLE_NAMES
from pipeline.store.delta import CommitFailedError, DeltaStore, is_remote

TABLES = TABLE_NAMES
RUN_LOG = RUN_LOG_TABLE.name
# Bumped when a reader's verdict on some bytes changes (v3: mixed line endings read, NUL bytes in names
# quarantined): staged files of the old readers are never reused, and the next run is a full one.
STAGING_VERSION = "v3"
RUN_LOG_SCHEMA = RUN_LOG_TABLE.schema


LEASE_TTL_S = 900.0  # default of LIGER_LEASE_TTL_S: a crashed holder's lease runs out after this


class WarehouseBusy(Timeout):
    """The run lock could not be taken: says what happened and that nothing changed."""

    def __init__(self, lock_file: str, waited: float, holder: str = ""):
        super().__init__(lock_file)
        self.waited, self.holder = waited, holder

    def __str__(self) -> str:
        who = f" ({self.holder})" if self.holder else ""
        return (
            f"another run holds the warehouse lock {self.lock_file}{who} (waited {self.waited:.0f} s); "
            "this run committed nothing and the warehouse is unchanged; retry when that run has finished"
        )


class LeaseLost(RuntimeError):
    """A run's lease ran out (or another run took the warehouse) before it published: its commits stay
    unpublished, and the next run restores them away."""


class WarehouseLock(FileLock):
    def acquire(self, timeout=None, *args, **kwargs):  # type: ignore[override]
        try:
            return super().acquire(timeout, *args, **kwargs)
        except Timeout as exc:
            raise WarehouseBusy(self.lock_file, self.timeout if timeout is None else timeout) from exc


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def describe_holder(holder: str, expires: float | None = None) -> str:
    """Who holds the lease, for a person deciding whether to wait: host, pid, alive or gone."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    until = f", lease until {datetime.fromtimestamp(expires, UTC):%Y-%m-%d %H:%M:%S} UTC" if expires else ""
    if host == socket.gethostname() and pid_text.isdigit():
        state = "alive" if _pid_alive(int(pid_text)) else "dead: its lease is taken over"
        return f"{holder}: pid {pid_text} on this host, {state}{until}"
    return f"{holder}: on host {host}, not checkable from here{until}"


class DeltaLease:
    """The run lock of a warehouse on object storage, where no file lock reaches other hosts.

    A one-row Delta table names the holder (``host:pid:nonce``) and a lease expiry. Taking it is a
    MERGE, and two MERGEs on one table conflict, so of two runs racing for it exactly one commits
    (delta-rs commits with conditional put). While held, a daemon thread renews it every ``ttl``/3;
    a crashed holder's lease runs out after ``ttl`` (``LIGER_LEASE_TTL_S``), and a holder on this
    host whose process is gone is taken over at once. A run whose renewal finds the lease taken knows
    it lost it (``lost``); its publish is refused (:meth:`Warehouse.append_run`)."""

    TABLE = "warehouse_lock"

    def __init__(self, store: DeltaStore, timeout: float, ttl: float | None = None):
        from pipeline.config import lease_ttl_s

        self.store, self.timeout = store, timeout
        self.ttl = ttl if ttl is not None else lease_ttl_s()
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.lost = False
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _holder(self) -> tuple[str, float] | None:
        files = self.store.files(self.TABLE)
        if not files:
            return None
        with connect(remote_root=self.store.root) as con:
            rows = con.execute(
                "select holder, expires from read_parquet($f) order by expires desc limit 1", {"f": files}
            ).fetchall()
        row = rows[0] if rows else None
        return None if row is None else (row[0], row[1])

    def _dead_local_holder(self, holder: tuple[str, float] | None) -> str:
        """The holder's name when it is a process on this host that no longer exists, else ''."""
        if holder is None:
            return ""
        host, _, rest = holder[0].partition(":")
        pid_text = rest.partition(":")[0]
        if host == socket.gethostname() and pid_text.isdigit() and not _pid_alive(int(pid_text)):
            return holder[0]
        return ""

    def _claim(self, expires: float, replaces: str = "") -> None:
        from deltalake import write_deltalake

        row = pa.table({"slot": [0], "holder": [self.owner], "expires": [expires]})
        dt = self.store.open(self.TABLE)
        if dt is None:
            write_deltalake(self.store.uri(self.TABLE), row, mode="append", storage_options=self.store.options)
            return
        source = row.append_column("now", pa.array([time.time()])).append_column("replaces", pa.array([replaces]))
        (
            dt.merge(source, predicate="t.slot = s.slot", source_alias="s", target_alias="t")
            .when_matched_update(
                {"holder": "s.holder", "expires": "s.expires"},
                predicate="t.expires < s.now or t.holder = s.holder or t.holder = s.replaces",
            )
            .when_not_matched_insert({"slot": "s.slot", "holder": "s.holder", "expires": "s.expires"})
            .execute()
        )

    def renew(self) -> bool:
        """Push the expiry out by ``ttl`` if this run still holds the lease; False (and ``lost``) if not."""
        dt = self.store.open(self.TABLE)
        source = pa.table({"slot": [0], "holder": [self.owner], "expires": [time.time() + self.ttl]})
        if dt is not None:
            metrics = (
                dt.merge(
                    source, predicate="t.slot = s.slot and t.holder = s.holder", source_alias="s", target_alias="t"
                )
                .when_matched_update({"expires": "s.expires"})
                .execute()
            )
            if metrics.get("num_target_rows_updated", 0) == 1:
                return True
        self.lost = True
        return False

    def check(self) -> None:
        """Raise `LeaseLost` unless this run still holds the lease (read from the table now)."""
        holder = self._holder()
        if self.lost or holder is None or holder[0] != self.owner:
            self.lost = True
            who = describe_holder(*holder) if holder else "nobody"
            raise LeaseLost(
                f"this run's warehouse lease ran out before it published (now held by {who}); "
                "its commits stay unpublished and the next run restores them"
            )

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                if not self.renew():
                    return
            except Exception:  # noqa: BLE001 - a failed renewal (an outage) is retried; the publish re-checks
                continue

    def acquire(self) -> DeltaLease:
        deadline = time.monotonic() + self.timeout
        while True:
            holder = self._holder()
            try:
                self._claim(time.time() + self.ttl, self._dead_local_holder(holder))
            except (CommitFailedError, OSError) as exc:  # another run's claim won the race: look again
                if "conflict" not in str(exc).lower() and not isinstance(exc, CommitFailedError):
                    raise
            holder = self._holder()
            if holder and holder[0] == self.owner:
                self._stop.clear()
                self._renewer = threading.Thread(target=self._renew_loop, name="liger-lease-renewal", daemon=True)
                self._renewer.start()
                return self
            if time.monotonic() > deadline:
                raise WarehouseBusy(
                    self.store.uri(self.TABLE), self.timeout, describe_holder(*holder) if holder else ""
                )
            time.sleep(0.5)

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        dt = self.store.open(self.TABLE)
        if dt is not None:
            dt.delete(f"holder = '{self.owner}'")  # owner is hostname:pid:hex, generated here

    def __enter__(self) -> DeltaLease:
        return self.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.release()
        except Exception:
            if exc_type is None:
                raise
            # The run failed already (an outage, say) and cannot release: its error is the one to see.
            # The lease is left; on this host it is taken over once this process is gone.


@dataclass
class Published:
    """One row of the run log: the table versions a reader sees after that run."""

    seq: int
    run_id: str
    committed_at: datetime
    mode: str
    versions: dict[str, int | None]
    stats: dict = field(default_factory=dict)


# Delta never rewrites a data file, so a run log's rows are a function of its file list: read once
# per list (the last few lists kept). A run asks for the log several times, each through a DuckDB
# connection of its own.
@functools.lru_cache(maxsize=8)
def _run_log_rows(root_uri: str, files: tuple[str, ...]) -> tuple[tuple, ...]:
    with connect(remote_root=root_uri) as con:
        return tuple(
            con.execute(
                "select seq, run_id, committed_at, mode, versions, stats from read_parquet($f) order by seq",
                {"f": list(files)},
            ).fetchall()
        )


class Warehouse:
    def __init__(self, root: str | Path, local_dir: Path | None = None, lock_timeout: float = 600.0):
        root_s = str(root)
        self.remote = is_remote(root_s)
        self.root_uri = root_s.rstrip("/") if self.remote else str(Path(root_s).resolve())
        self.local = (local_dir or Path(self.root_uri)).resolve() if (local_dir or not self.remote) else None
        if self.local is None:
            raise ValueError("a warehouse on object storage needs a local folder for staging and liger.duckdb")
        self.store = DeltaStore(self.root_uri)
        self.lock_timeout = lock_timeout
        self.lease: DeltaLease | None = None  # the lease of the run under way (object storage)

    # -- local paths -------------------------------------------------------------------------
    @property
    def staging(self) -> Path:
        return self.local / "staging" / STAGING_VERSION

    @property
    def duckdb_path(self) -> Path:
        return self.local / "liger.duckdb"

    @property
    def temp_dir(self) -> Path:
        return self.local / "tmp"

    def lock(self):
        """The run lock: local file lock for a local warehouse (released by the kernel when a run
        dies), a Delta lease for one on object storage."""
        timeout = self.lock_timeout
        if self.remote:
            self.lease = DeltaLease(self.store, timeout)
            return self.lease
        self.local.mkdir(parents=True, exist_ok=True)
        return WarehouseLock(str(self.local / ".lock"), timeout=timeout)

    def open_duckdb(self):
        """liger.duckdb read-only, able to read the tables wherever they live."""
        return connect(self.duckdb_path, read_only=True, remote_root=self.root_uri)

    def duckdb_lock(self) -> FileLock:
        """Serializes updates of the local liger.duckdb (copy, apply, rename)."""
        self.local.mkdir(parents=True, exist_ok=True)
        return WarehouseLock(str(self.local / ".duckdb.lock"), timeout=self.lock_timeout)

    # -- the run log -------------------------------------------------------------------------
    def run_log(self) -> list[Published]:
        files = self.store.files(RUN_LOG)
        if not files:
            return []
        rows = _run_log_rows(self.root_uri, tuple(files))
        return [
            Published(seq, run_id, at, mode, json.loads(v), json.loads(s or "{}"))
            for seq, run_id, at, mode, v, s in rows
        ]

    def published(self, seq: int | None = None, as_of: datetime | str | None = None) -> Published | None:
        """The state after the newest run, after run ``seq``, or the newest run committed at or
        before ``as_of`` (UTC)."""
        log = self.run_log()
        if seq is not None:
            log = [p for p in log if p.seq == seq]
        if as_of is not None:
            when = datetime.fromisoformat(as_of) if isinstance(as_of, str) else as_of
            when = when if when.tzinfo else when.replace(tzinfo=UTC)
            log = [p for p in log if p.committed_at <= when]
        return log[-1] if log else None

    def snapshot_files(self, published: Published | None = None) -> dict[str, list[str]]:
        """Parquet files of every table as of a published run (default: the newest)."""
        published = published or self.published()
        out: dict[str, list[str]] = {}
        for table in TABLES:
            version = published.versions.get(table) if published else None
            out[table] = [] if version is None else self.store.files(table, version)
        return out

    def append_run(
        self,
        run_id: str,
        mode: str,
        reason: str,
        versions: dict[str, int | None],
        stats: dict,
        seq: int | None = None,
    ) -> Published:
        """Publish: append the run's row. ``seq`` is the number the run took from the state it read
        under the lock; the row is inserted only if no run published that number meanwhile (a MERGE
        on seq, which conflicts with a racing append), and on object storage only while the run still
        holds its lease. Otherwise `LeaseLost`: this run's commits stay unpublished."""
        if self.lease is not None:
            self.lease.check()
        if seq is None:
            last = self.published()
            seq = (last.seq + 1) if last else 1
        now = datetime.now(UTC)
        row = pa.table(
            {
                "seq": [seq],
                "run_id": [run_id],
                "committed_at": [now],
                "mode": [mode],
                "reason": [reason],
                "versions": [json.dumps(versions, sort_keys=True)],
                "stats": [json.dumps(stats, sort_keys=True)],
            },
            schema=RUN_LOG_SCHEMA,
        )
        if not self.store.insert_new(RUN_LOG, row, key="seq", run_id=run_id):
            raise LeaseLost(
                f"run {seq} was published by another run while this one worked (its lock ran out); "
                "this run's commits stay unpublished and the next run restores them"
            )
        return Published(seq, run_id, now, mode, versions, stats)

    def restore_unpublished(self) -> dict[str, int]:
        """Undo commits that no run row names (a killed run's): each such table goes back to its
        published version in a new commit, so the next run starts from a consistent state."""
        published = self.published()
        restored = {}
        for table in TABLES:
            dt = self.store.open(table)
            if dt is None:
                continue
            want = published.versions.get(table) if published else None
            if want is None:
                # Created by a killed first run: empty it (a Delta table cannot go back before version 0).
                if dt.version() >= 0 and len(dt.file_uris()):
                    dt.delete()
                    restored[table] = -1
            elif dt.version() != want:
                dt.restore(want)
                restored[table] = want
        return restored

    def vacuum(self, retention: timedelta) -> dict[str, int]:
        return self.store.vacuum((*TABLES, RUN_LOG), retention)
