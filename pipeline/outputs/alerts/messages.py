"""An alert as a message: one line of text (the webhook's ``text``) and a Markdown page ready to
paste as a GitHub issue. Names from the data (kernels, configs, subjects, notes) are text, never markup:
every one is escaped before it enters the Markdown (no link, mention or HTML), and before it enters
the webhook's text (Slack's ``<``, ``>``, ``&``: ``<!channel>`` from the data pings no one). The page
stays under GitHub's 65,536 characters whatever the data: long texts and lists are cut, saying how
much was left out."""

from __future__ import annotations

import duckdb

from pipeline.outputs.markdown import GITHUB_LIMIT, fit_lines, md_clip, md_text

TEXT_LIMIT = 3_000  # characters of the webhook's text (Slack cuts a message's text at 40,000)
NOTE_LIMIT = 4_000  # characters of an ack note shown on the page
_CELL = 300  # characters of one table cell

# Both read the alerts of one batch at once ($ids): a deep warehouse holds thousands of alerts, and a
# query per alert was most of the notification step.
MEMBERS_SQL = """
select alert_id, kernel_name, kernel_operation_mode, metric_name, kernel_provider, coalesce(extra_config, ''),
       from_label, to_label, ratio, verdict, role
from alert_members where list_contains($ids, alert_id)
order by alert_id, role desc, ratio desc, kernel_name, kernel_operation_mode, metric_name, extra_config
"""
SUSPECTS_SQL = """
select alert_id, "commit", committed_at, subject, kernels from alert_suspects where list_contains($ids, alert_id)
order by alert_id, committed_at, "commit"
"""


def slack_text(text: str) -> str:
    """Plain text as Slack reads it: ``&``, ``<`` and ``>`` escaped (Slack's only control characters:
    ``<!channel>``, ``<@U123>`` and ``<http://…|…>`` need the angle brackets)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text_message(alert: dict) -> str:
    """The webhook's text: who, what and the state, in one line (plain text, at most TEXT_LIMIT
    characters before escaping)."""
    text = f"Liger alert {alert['alert_id']} [{alert['status']}]: {alert['line']}"
    if len(text) > TEXT_LIMIT:
        text = f"{text[: TEXT_LIMIT - 40]}… ({len(text) - TEXT_LIMIT + 40:,} more characters)"
    return slack_text(text)


def _line(alert: dict) -> str:
    """The alert's line without the ack note it ends with (the page shows the note once, in its status)."""
    line, note = alert["line"], alert.get("note")
    if note and line.endswith(f": {note}"):
        return line[: -len(note) - 2]
    return line


def markdown_messages(
    con: duckdb.DuckDBPyConnection, alerts: list[dict], bisects: dict[str, dict | None] | None = None
) -> dict[str, str]:
    """Each alert's Markdown message by alert id, from two queries for the whole batch; ``bisects``:
    the queued bisect of an alert (pipeline/bisect/queue.py), shown under its cause."""
    ids = [a["alert_id"] for a in alerts]
    suspects: dict[str, list[tuple]] = {i: [] for i in ids}
    members: dict[str, list[tuple]] = {i: [] for i in ids}
    for alert_id, *row in con.execute(SUSPECTS_SQL, {"ids": ids}).fetchall():
        suspects[alert_id].append(tuple(row))
    for alert_id, *row in con.execute(MEMBERS_SQL, {"ids": ids}).fetchall():
        members[alert_id].append(tuple(row))
    bisects = bisects or {}
    return {
        a["alert_id"]: markdown_message(a, suspects[a["alert_id"]], members[a["alert_id"]], bisects.get(a["alert_id"]))
        for a in alerts
    }


def bisect_line(entry: dict) -> str:
    """The alert's queued bisect in one Markdown line: state, sweep, range, and the result once run."""
    plan, result = entry.get("plan") or {}, entry.get("result") or {}
    sweep = " ".join(str(plan.get(k) or "auto") for k in ("kernel", "pass", "metric"))
    span = f"{str((plan.get('from') or {}).get('sha'))[:7]}..{str((plan.get('to') or {}).get('sha'))[:7]}"
    line = f"- bisect: **{md_text(entry.get('state'))}** plan `{md_text(plan.get('id'))}` ({md_text(sweep)}, {span})"
    if entry.get("state") == "queued":
        line += "; `make bisect-queue` on a GPU host runs it"
    if entry.get("state") == "failed":
        line += f": {md_text(entry.get('reason'))}"
    if result:
        line += f": `{md_text(result.get('outcome'))}`"
        if result.get("culprit"):
            line += f", culprit `{md_text(str(result['culprit'])[:12])}` {md_text(result.get('culprit_subject'))}"
    return line


def markdown_message(
    alert: dict, suspects: list[tuple], members: list[tuple], bisect: dict | None = None, limit: int = GITHUB_LIMIT
) -> str:
    """The alert as a GitHub issue: title, the line, evidence, suspects, then every flagged pair (the
    lists cut to fit ``limit`` characters, each saying how many more there are)."""
    line = _line(alert)
    # the status is our own word; the range and names come from the data and are escaped
    lines = [
        f"# [{alert['status']}] {md_clip(line.split(' — ')[0], 500)}",
        "",
        md_clip(line, 8_000),
        "",
        f"- alert: `{alert['alert_id']}` ({alert['axis']} axis, {alert['direction']}, {alert['kind']})",
        f"- status: **{alert['status']}**"
        + (f" (recovered at {md_clip(alert['recovered_at'], 200)})" if alert.get("recovered_at") else "")
        + (f"; note: {md_clip(alert['note'], NOTE_LIMIT)}" if alert.get("note") else ""),
        f"- cause: **{alert['cause']}**: {md_clip(alert['cause_evidence'], 8_000)}",
        f"- opened in warehouse run {alert['opened_run']}, status since run {alert['changed_run']}",
        *([bisect_line(bisect)] if bisect else []),
        "",
        "## Suspects (commits touching a flagged kernel's source)",
        "",
    ]
    suspect_rows = [
        f"- `{md_text(sha)[:40]}` {md_text(str(when)[:10])} {md_clip(subject, _CELL)} "
        f"(touches {md_clip(', '.join(kernels), _CELL)})"
        for sha, when, subject, kernels in suspects
    ] or ["- none" if alert["cause"] != "unknown" else "- not known (no clone)"]
    table = ["", "## Flagged pairs", "", "| kernel | pass | metric | provider | config | pair | ratio | verdict |"]
    table.append("|---|---|---|---|---|---|---:|---|")
    pair_rows = []
    for kernel, mode, metric, provider, config, frm, to, ratio, verdict, role in members:
        cells = [kernel, mode, metric, provider, config, f"{frm}..{to}", f"×{ratio:.3f}", f"{verdict} ({role})"]
        pair_rows.append("| " + " | ".join(md_clip(c, _CELL) for c in cells) + " |")
    # the fixed parts, room for two "… N more" lines, and a margin for what a person adds
    budget = limit - 512 - sum(len(x) + 1 for x in lines + table)
    suspect_rows, cut = fit_lines(suspect_rows, budget // 4)
    lines += suspect_rows + ([f"- … {cut:,} more suspects"] if cut else []) + table
    kept, cut = fit_lines(pair_rows, budget - sum(len(x) + 1 for x in suspect_rows))
    lines += kept + (["", f"… {cut:,} more flagged pairs"] if cut else [])
    return "\n".join(lines) + "\n"
