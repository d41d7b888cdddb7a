"""Deliver alert messages: one per alert per status, never twice for the same status.

After each build of liger.duckdb the `alert_notifications` asset calls `sync_and_notify`: every
alert of the `alerts` view whose status differs from the status last delivered (`alert_state`
.notified_status) gets one message, written to ``<local>/alerts/<alert_id>.md`` (a GitHub issue,
ready to paste) and POSTed to the webhook (``LIGER_ALERT_WEBHOOK``, Slack-compatible JSON with
``text``) when one is set. Delivered means both; a failed POST leaves the status undelivered (the
error kept in ``delivery_error``), so the next run tries again; it never raises past the caller.

All of it (what was delivered read, the alerts read, the messages sent, what was sent written) holds
the alert state's delivery lock (`alert_state.state_lock`): a run and a `make ack` at once never send
one status twice. What it writes is merged by alert into the run's columns of the state
(`alert_state.RUN_COLUMNS`): an acknowledgement recorded meanwhile stays. Sending takes at most
``deadline_s`` (``LIGER_ALERT_DEADLINE_S``) in all, whatever the receiver does (`webhook`); what is
not sent by then is left undelivered for the next run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pipeline.common.duck import open_readonly
from pipeline.common.files import write_atomic
from pipeline.outputs.alerts import messages
from pipeline.outputs.alerts.webhook import Deadline, post
from pipeline.regress.alert_state import RUN_COLUMNS, alerts_folder, by_id, merge_state, now, read_state, state_lock

ALERTS_SQL = "select * from alerts order by axis, gpu_name, from_order, to_order, alert_id"


@dataclass
class Delivery:
    sent: list[str] = field(default_factory=list)  # alert ids delivered now, as "<id>:<status>"
    failed: dict[str, str] = field(default_factory=dict)  # alert id -> error
    alerts: int = 0

    def summary(self) -> str:
        failed = f", {len(self.failed)} failed (retried next run)" if self.failed else ""
        return f"{self.alerts} alert(s); {len(self.sent)} message(s) sent{failed}"


def read_alerts(duckdb_path: Path, root_uri: str, delivered: dict[str, str]) -> tuple[list[dict], dict[str, str]]:
    """Every alert of the published liger.duckdb, and the Markdown message of each whose status is not
    the one ``delivered`` (alert id -> status last delivered): a run with nothing new renders none."""
    with open_readonly(duckdb_path, root_uri) as con:
        cur = con.execute(ALERTS_SQL)
        cols = [d[0] for d in cur.description]
        alerts = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
        due = [a for a in alerts if delivered.get(a["alert_id"]) != a["status"]]
        pages = messages.markdown_messages(con, due) if due else {}
    return alerts, pages


def sync_and_notify(
    duckdb_path: Path,
    root_uri: str,
    local: Path,
    webhook: str = "",
    timeout: float = 10.0,
    attempts: int = 3,
    deadline_s: float = 60.0,
) -> Delivery:
    """The state brought to the alerts of ``duckdb_path`` and one message per undelivered status,
    under the delivery lock; sending stops at ``deadline_s`` seconds."""
    with state_lock(root_uri, duckdb_path.parent):
        deadline = Deadline(deadline_s)
        state = by_id(read_state(root_uri))
        delivered = {i: row.get("notified_status") for i, row in state.items()}
        alerts, pages = read_alerts(duckdb_path, root_uri, delivered)
        done, stamp, rows = Delivery(alerts=len(alerts)), now(), []
        for alert in alerts:
            old = state.get(alert["alert_id"], {})
            row = {k: old.get(k) for k in RUN_COLUMNS} | {
                "alert_id": alert["alert_id"],
                "opened_run": alert["opened_run"],
                "status": alert["status"],
                "changed_run": alert["changed_run"],
                "members_digest": alert["members_digest"],
                "updated_at": old.get("updated_at") or stamp,
            }
            if old.get("status") != alert["status"] or old.get("members_digest") != alert["members_digest"]:
                row["updated_at"] = stamp
            if old.get("notified_status") != alert["status"]:
                error = _deliver(alert, pages[alert["alert_id"]], local, webhook, timeout, attempts, deadline)
                if error is None:
                    row |= {"notified_status": alert["status"], "notified_at": stamp, "delivery_error": None}
                    done.sent.append(f"{alert['alert_id']}:{alert['status']}")
                else:
                    row["delivery_error"] = error
                    done.failed[alert["alert_id"]] = error
            if any(row[k] != old.get(k) for k in RUN_COLUMNS):
                rows.append(row)
        merge_state(root_uri, rows, RUN_COLUMNS)
    return done


def _deliver(
    alert: dict, page: str, local: Path, webhook: str, timeout: float, attempts: int, deadline: Deadline
) -> str | None:
    folder = alerts_folder(local)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(folder / f"{alert['alert_id']}.md", page.encode())
    if not webhook:
        return None
    return post(webhook, messages.text_message(alert), timeout, deadline, attempts)
