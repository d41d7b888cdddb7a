"""The alerts' state: a Delta table at ``<warehouse>/alert_state`` (beside ``tables/``, so neither a
full run nor a rebuild of liger.duckdb nor `make clean` touches it), one row per alert ever shown.

What only people and earlier runs know lives here: the run that first showed an alert, the status it
last had and the run that gave it, an acknowledgement (note, time, and the alert's flagged pairs
then: new pairs reopen it), and what was last delivered (status, time, error). The DuckDB build copies
it into liger.duckdb (`internal.alert_state`) under the `alerts` view (sql/regress/alerts/alerts.sql); the
`alert_notifications` asset and `make ack` write it. It holds tens of rows: it is rewritten whole.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from pipeline.engine.catalog import alerts_view
from pipeline.store.delta import WarehouseTableError, storage_options

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


def write_state(root_uri: str, rows: list[dict]) -> None:
    """Replace the state with ``rows`` (dicts with SCHEMA's keys) in one Delta commit."""
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    try:
        options = storage_options(root_uri)
        write_deltalake(state_uri(root_uri), table, mode="overwrite", schema_mode="overwrite", storage_options=options)
    except CommitFailedError:
        raise
    except (DeltaError, OSError) as exc:
        raise WarehouseTableError(TABLE, state_uri(root_uri), exc) from exc


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
    con.execute(f'create or replace view "{model.name}" as\n{model.sql}')
    return state.num_rows


def alerts_folder(local: Path) -> Path:
    """Where each alert's Markdown message goes: ``<local>/alerts/<alert_id>.md``."""
    return local / "alerts"
