"""`make ack ALERT=<id> NOTE="…"`: a person acknowledges an alert. The note goes to the Delta table
alert_state (it survives every rebuild), liger.duckdb's copy of it is refreshed at once (a copy of
the file replaces it, as a build does), and the acknowledgement is delivered as one message. The
acknowledgement holds while the alert's flagged pairs are those it had: a new step reopens it."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import uuid

from pipeline.common import duck
from pipeline.common.files import atomic_path, publish
from pipeline.config import load
from pipeline.outputs.alerts.notify import sync_and_notify
from pipeline.regress.alert_state import install_alerts, record_ack
from pipeline.serve.duckdb_build import _file_id, _state_sidecar, use_internal_schema
from pipeline.store.warehouse import Warehouse


def acknowledge(wh: Warehouse, alert_id: str, note: str) -> dict:
    """Record the acknowledgement of ``alert_id`` (one of the published `alerts`); returns its row."""
    with duck.connect(wh.duckdb_path, read_only=True, remote_root=wh.root_uri) as con:
        found = con.execute(
            "select members_digest, status from alerts where alert_id = $id", {"id": alert_id}
        ).fetchone()
    if found is None:
        raise KeyError(
            f"no alert {alert_id!r} in {wh.duckdb_path} (see: liger-bench sql -c 'select alert_id, line from alerts')"
        )
    # merged by alert into the acknowledgement's columns: a run delivering meanwhile keeps its own
    row = record_ack(wh.root_uri, alert_id, found[0], note)
    refresh_duckdb_state(wh)
    return row


def refresh_duckdb_state(wh: Warehouse) -> None:
    """liger.duckdb's internal.alert_state from the Delta table, on a copy that replaces the file."""
    with wh.duckdb_lock():
        tmp = wh.local / f".liger.duckdb.{uuid.uuid4().hex}.tmp"
        shutil.copyfile(wh.duckdb_path, tmp)
        try:
            with duck.connect(tmp, remote_root=wh.root_uri) as con:
                use_internal_schema(con)
                install_alerts(con, wh.root_uri)
                state = json.loads(duck.scalar(con, "select state from liger_build_state"))
                con.execute("checkpoint")
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        publish(tmp, wh.duckdb_path)
        # the build's sidecar names the file it describes: the new file, same build state
        side = atomic_path(_state_sidecar(wh))
        side.write_text(json.dumps({"state": state, "file": _file_id(wh.duckdb_path)}))
        publish(side, _state_sidecar(wh))


def main(argv: list[str] | None = None) -> int:
    from pipeline.cli.parser import parse

    return run(parse(["ack", *(sys.argv[1:] if argv is None else argv)]))


def run(args: argparse.Namespace) -> int:
    """`liger-bench ack ALERT NOTE`: 2 for an empty note, no warehouse, or an alert it does not have."""
    if not args.note.strip():
        print("ack: the note must say why (liger-bench ack ALERT NOTE; make ack NOTE=…)", file=sys.stderr)
        return 2
    settings = load()
    wh = Warehouse(settings.warehouse, settings.local)
    if not wh.duckdb_path.exists():
        print(f"ack: no warehouse at {wh.duckdb_path}; run `liger-bench run` (or `make run`) first", file=sys.stderr)
        return 2
    try:
        acknowledge(wh, args.alert_id, args.note)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    done = sync_and_notify(
        wh.duckdb_path,
        wh.root_uri,
        settings.local,
        settings.alert_webhook,
        settings.alert_timeout_s,
        deadline_s=settings.alert_deadline_s,
    )
    print(f"acknowledged {args.alert_id}: {args.note} ({done.summary()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
