"""The report's lead: one line per alert (the `alerts` view), newest first, the alert's largest
sweeps under it. Every string from the data is escaped (HTML) or written as literal text (Markdown)."""

from __future__ import annotations

import html

from pipeline.outputs.alerts.lead import Lead, read_leads, sweep_text
from pipeline.outputs.markdown import md_text

ALERTS_SHOWN = 50
SWEEPS_SHOWN = 8


def read_alert_section(con) -> tuple[list[Lead], int, int]:
    return read_leads(con, ALERTS_SHOWN, SWEEPS_SHOWN)


def _more(lead: Lead) -> int:
    return max(lead.alert["sweeps"] - len(lead.sweeps), 0)


def alert_section_markdown(section: tuple[list[Lead], int, int]) -> list[str]:
    leads, total, open_ = section
    out = [f"\n## Alerts ({total:,}, {open_:,} open; newest first)\n"]
    if not total:
        return out + ["No flagged step on either axis.\n"]
    for lead in leads:
        a = lead.alert
        out.append(f"- **{a['status']}** `{a['alert_id']}` {md_text(a['line'])}")
        out += [f"  - {md_text(sweep_text(s))}" for s in lead.sweeps]
        if _more(lead):
            out.append(f"  - … and {_more(lead):,} more sweep(s)")
    if total > len(leads):
        out.append(f"- … and {total - len(leads):,} more alerts (`select * from alerts`)")
    return [*out, ""]


def alert_section_html(section: tuple[list[Lead], int, int]) -> list[str]:
    leads, total, open_ = section
    out = [f"<h2 id='alerts'>Alerts ({total:,}, {open_:,} open; newest first)</h2>"]
    if not total:
        return [*out, "<p><em>No flagged step on either axis.</em></p>"]
    out.append("<ul class='alerts'>")
    for lead in leads:
        a = lead.alert
        sweeps = "".join(f"<li>{html.escape(sweep_text(s))}</li>" for s in lead.sweeps)
        if _more(lead):
            sweeps += f"<li>… and {_more(lead):,} more sweep(s)</li>"
        out.append(
            f"<li id='alert-{html.escape(a['alert_id'])}'><b class='status-{html.escape(a['status'])}'>"
            f"{html.escape(a['status'])}</b> <code>{html.escape(a['alert_id'])}</code> {html.escape(a['line'])}"
            f"<ul>{sweeps}</ul></li>"
        )
    out.append("</ul>")
    if total > len(leads):
        out.append(f"<p>… and {total - len(leads):,} more alerts (<code>select * from alerts</code>)</p>")
    return out
