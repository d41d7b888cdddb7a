"""The alerts' state: a Delta table at ``<warehouse>/alert_state`` (beside ``tables/``, so neither a
full run nor a rebuild of liger.duckdb nor `make clean` touches it), one row per alert ever shown.

What only people and earlier runs know lives here: the run that first showed an alert, the status it
last had and the run that gave it, an acknowledgement (note, time, and the alert's flagged pairs
then: new pairs reopen it), and what was last delivered (status, time, error). The DuckDB build copies
it into liger.duckdb (`internal.alert_state`) under the `alerts` view (sql/regress/alerts/alerts.sql); the
`alert_notifications` asset and `make ack` write it.

Two writers, one rule each (docs/guarantees.md, "Alerts"):
* each writes only its own columns, merged by ``alert_id`` (a Delta MERGE; a conflicting commit is
  retried on a fresh read): a run writes the lifecycle and delivery columns (`RUN_COLUMNS`), `make ack`
  the acknowledgement (`ACK_COLUMNS`), so neither overwrites what the other wrote meanwhile;
* whoever delivers messages holds `state_lock` from reading what was delivered to writing what it
  delivered, so two deliverers (a run and `make ack`, or two acks) never send one status twice.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from pipeline.common.duck import is_remote
from pipeline.engine.catalog import alerts_view
from pipeline.engine.run import create_view
from pipeline.store.delta import DeltaStore, WarehouseTableError, storage_options
from pipeline.store.warehouse import DeltaLease, WarehouseLock

LOCK_FILE = ".alert_state.lock"  # beside liger.duckdb, for a warehouse on a local disk

TABLE = "alert_state"
_TS = pa.timestamp("us", tz="UTC")
SCHEMA = pa.schema(
    [
        ("alert_id", pa.string()),
        ("opened_run", pa.int64()),
        ("status", pa.string()),
        ("changed_run", pa.int64()),
        ("members_digest", pa.string()),
        ("ack_members", pa.string()),
        ("ack_note", pa.string()),
        ("acknowledged_at", _TS),
        ("notified_status", pa.string()),
        ("notified_at", _TS),
        ("delivery_error", pa.string()),
        ("updated_at", _TS),
    ]
)
RUN_COLUMNS = ("opened_run", "status", "changed_run", "members_digest", "notified_status", "notified_at",
               "delivery_error", "updated_at")  # fmt: skip
ACK_COLUMNS = ("ack_members", "ack_note", "acknowledged_at", "updated_at")
_HELD = threading.local()  # the locks this thread holds (re-entrant: `make ack` holds it across its delivery)


class AlertStateLease(DeltaLease):
    """On object storage, the delivery lock is a lease of its own (the run lock is not held then)."""

    TABLE = "alert_state_lock"


@contextmanager
def state_lock(root_uri: str, local: Path, timeout: float = 600.0) -> Iterator[None]:
    """The delivery lock: a file lock beside liger.duckdb (``local``), a Delta lease on object
    storage. Says on stderr when it has to wait, and for whom."""
    key = f"{root_uri}|{local}"
    held = getattr(_HELD, "keys", set())
    if key in held:
        yield
        return
    if is_remote(root_uri):
        lock = AlertStateLease(DeltaStore(root_uri), timeout)
        holder = lock._holder()
        if holder is not None and holder[1] > time.time():
            print(f"waiting for the alert state lock (held by {holder[0]})", file=sys.stderr, flush=True)
    else:
        local.mkdir(parents=True, exist_ok=True)
        lock = WarehouseLock(str(local / LOCK_FILE), timeout=timeout)
        try:
            lock.acquire(timeout=0)
            lock.release()
        except TimeoutError:
            print("waiting for the alert state lock (a run or `make ack` is delivering)", file=sys.stderr, flush=True)
    with lock:
        _HELD.keys = held | {key}
        try:
            yield
        finally:
            _HELD.keys = held


def state_uri(root_uri: str) -> str:
    return f"{root_uri.rstrip('/')}/{TABLE}"


def read_state(root_uri: str) -> pa.Table:
    """Every state row (an empty table of SCHEMA before the first)."""
    try:
        dt = DeltaTable(state_uri(root_uri), storage_options=storage_options(root_uri))
        return dt.to_pyarrow_table().select(SCHEMA.names).cast(SCHEMA)
    except TableNotFoundError:
        return SCHEMA.empty_table()
    except (DeltaError, OSError, ValueError) as exc:
        raise WarehouseTableError(TABLE, state_uri(root_uri), exc) from exc


def merge_state(root_uri: str, rows: list[dict], columns: tuple[str, ...], attempts: int = 10) -> None:
    """``columns`` of ``rows`` (dicts keyed by SCHEMA's names) into the state, one MERGE keyed by
    ``alert_id``: other columns of a known alert keep what is there now; a new alert is inserted. A
    commit that conflicts with another writer's is tried again."""
    if not rows:
        return
    table = pa.Table.from_pylist([{k: r.get(k) for k in SCHEMA.names} for r in rows], schema=SCHEMA)
    uri, options = state_uri(root_uri), storage_options(root_uri)
    for attempt in range(attempts):
        try:
            try:
                dt = DeltaTable(uri, storage_options=options)
            except TableNotFoundError:
                # created empty, then merged into: two first writers at once (a run's first delivery and
                # an ack) both merge, where two appends would give one alert two rows
                # failing, the other writer created it: merge into theirs (or fail below, by name)
                with suppress(DeltaError, OSError):
                    write_deltalake(uri, SCHEMA.empty_table(), mode="append", storage_options=options)
                dt = DeltaTable(uri, storage_options=options)
            (
                dt.merge(table, predicate="t.alert_id = s.alert_id", source_alias="s", target_alias="t")
                .when_matched_update({c: f"s.{c}" for c in columns})
                .when_not_matched_insert({c: f"s.{c}" for c in SCHEMA.names})
                .execute()
            )
            return
        except CommitFailedError:
            if attempt + 1 == attempts:
                raise
            time.sleep(0.05 * (attempt + 1))
        except (DeltaError, OSError) as exc:
            if "conflict" in str(exc).lower() and attempt + 1 < attempts:
                time.sleep(0.05 * (attempt + 1))
                continue
            raise WarehouseTableError(TABLE, state_uri(root_uri), exc) from exc


def record_ack(root_uri: str, alert_id: str, members_digest: str, note: str) -> dict:
    """The acknowledgement of ``alert_id`` (its flagged pairs now: ``members_digest``), merged into the
    state without touching what a run wrote there; returns the row merged."""
    stamp = now()
    row = {"alert_id": alert_id, "ack_members": members_digest, "ack_note": note, "acknowledged_at": stamp,
           "updated_at": stamp}  # fmt: skip
    merge_state(root_uri, [row], ACK_COLUMNS)
    return row


def by_id(table: pa.Table) -> dict[str, dict]:
    return {r["alert_id"]: r for r in table.to_pylist()}


def now() -> datetime:
    return datetime.now(UTC)


def install_alerts(con: duckdb.DuckDBPyConnection, root_uri: str) -> int:
    """``alert_state`` (a copy of the Delta table) and the ``alerts`` view, on the build's
    connection (schema internal) after the analysis models; returns the state's rows."""
    state = read_state(root_uri)
    con.register("alert_state_rows", state)
    con.execute("create or replace table alert_state as select * from alert_state_rows")
    con.unregister("alert_state_rows")
    model = alerts_view()
    create_view(con, model.name, model.sql)
    return state.num_rows


def alerts_folder(local: Path) -> Path:
    """Where each alert's Markdown message goes: ``<local>/alerts/<alert_id>.md``."""
    return local / "alerts"
