"""An alert as a message: one line of text (the webhook's ``text``) and a Markdown page ready to
paste as a GitHub issue. Names from the data (kernels, configs, subjects) are text, never markup:
every one is escaped before it enters the Markdown."""

from __future__ import annotations

import duckdb

from pipeline.analyze.markdown import md_text

MEMBERS_SQL = """
select kernel_name, kernel_operation_mode, metric_name, kernel_provider, coalesce(extra_config, ''),
       from_label, to_label, ratio, verdict, role
from alert_members where alert_id = $id
order by role desc, ratio desc, kernel_name, kernel_operation_mode, metric_name, extra_config
"""
SUSPECTS_SQL = """
select "commit", committed_at, subject, kernels from alert_suspects where alert_id = $id
order by committed_at, "commit"
"""


def text_message(alert: dict) -> str:
    """The webhook's text: who, what and the state, in one line (plain text)."""
    return f"Liger alert {alert['alert_id']} [{alert['status']}]: {alert['line']}"


def markdown_message(con: duckdb.DuckDBPyConnection, alert: dict) -> str:
    """The alert as a GitHub issue: title, the line, evidence, suspects, then every flagged pair."""
    # the status is our own word; the range and names come from the data and are escaped
    lines = [
        f"# [{alert['status']}] {md_text(alert['line'].split(' — ')[0])}",
        "",
        md_text(alert["line"]),
        "",
        f"- alert: `{alert['alert_id']}` ({alert['axis']} axis, {alert['direction']}, {alert['kind']})",
        f"- status: **{alert['status']}**"
        + (f" (recovered at {md_text(alert['recovered_at'])})" if alert.get("recovered_at") else "")
        + (f"; note: {md_text(alert['note'])}" if alert.get("note") else ""),
        f"- cause: **{alert['cause']}**: {md_text(alert['cause_evidence'])}",
        f"- opened in warehouse run {alert['opened_run']}, status since run {alert['changed_run']}",
        "",
    ]
    suspects = con.execute(SUSPECTS_SQL, {"id": alert["alert_id"]}).fetchall()
    lines += ["## Suspects (commits touching a flagged kernel's source)", ""]
    lines += [
        f"- `{sha}` {md_text(str(when)[:10])} {md_text(subject)} (touches {md_text(', '.join(kernels))})"
        for sha, when, subject, kernels in suspects
    ] or ["- none" if alert["cause"] != "unknown" else "- not known (no clone)"]
    lines += ["", "## Flagged pairs", "", "| kernel | pass | metric | provider | config | pair | ratio | verdict |"]
    lines.append("|---|---|---|---|---|---|---:|---|")
    for kernel, mode, metric, provider, config, frm, to, ratio, verdict, role in con.execute(
        MEMBERS_SQL, {"id": alert["alert_id"]}
    ).fetchall():
        cells = [kernel, mode, metric, provider, config, f"{frm}..{to}", f"×{ratio:.3f}", f"{verdict} ({role})"]
        lines.append("| " + " | ".join(md_text(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"
