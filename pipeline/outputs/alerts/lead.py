"""Alerts first: what the run summary, the report and the dashboard lead with. One line per alert
(range, GPU, sweeps and kernels, worst ratio, cause, status; the `alerts` view's `line`), newest
first, then the alert's sweeps under it. One query for the alerts and one for their sweeps, both
capped: the cost follows the number of alerts shown, not the warehouse."""

from __future__ import annotations

from dataclasses import dataclass, field

ALERTS_SQL = """
select alert_id, status, line, axis, gpu_name, direction, kind, cause, sweeps, pairs, from_order, to_order,
       from_label, to_label, kernel_names
from alerts
order by case axis when 'commit' then 0 else 1 end, to_order desc, from_order desc, worst_ratio desc, alert_id
limit $n
"""
MEMBERS_SQL = """
select alert_id, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
       extra_config, from_label, to_label, ratio, verdict, role,
       row_number() over (partition by alert_id order by role = 'step' desc, abs(ln(ratio)) desc, kernel_name,
                          kernel_operation_mode, metric_name, extra_config) as rank
from alert_members
where alert_id in (select unnest($ids))
qualify rank <= $k
order by alert_id, rank
"""
COUNT_SQL = "select count(*), count(*) filter (where status = 'open') from alerts"


@dataclass
class Lead:
    alert: dict
    sweeps: list[dict] = field(default_factory=list)


def has_alerts(con) -> bool:
    return bool(
        con.execute(
            "select count(*) from duckdb_views() where view_name = 'alerts' and schema_name = 'main'"
        ).fetchone()[0]
    )


def read_leads(con, limit: int = 20, sweeps_per_alert: int = 5) -> tuple[list[Lead], int, int]:
    """The newest ``limit`` alerts with up to ``sweeps_per_alert`` of their pairs each (largest change
    first); and how many alerts there are, and how many of them are open."""
    if not has_alerts(con):
        return [], 0, 0
    total, open_ = con.execute(COUNT_SQL).fetchone()
    cur = con.execute(ALERTS_SQL, {"n": limit})
    cols = [d[0] for d in cur.description]
    leads = {r[0]: Lead(dict(zip(cols, r, strict=True))) for r in cur.fetchall()}
    if leads:
        cur = con.execute(MEMBERS_SQL, {"ids": list(leads), "k": sweeps_per_alert})
        cols = [d[0] for d in cur.description]
        for r in cur.fetchall():
            row = dict(zip(cols, r, strict=True))
            leads[row["alert_id"]].sweeps.append(row)
    return list(leads.values()), total, open_


def sweep_text(s: dict) -> str:
    provider = "" if s["kernel_provider"] == "liger" else f" [{s['kernel_provider']}]"
    return (
        f"{s['kernel_name']}{provider} {s['kernel_operation_mode']} {s['metric_name']}: "
        f"{s['from_label']}..{s['to_label']} ×{s['ratio']:.3f} ({s['verdict']}"
        + (", taken back" if s["role"] == "taken back" else "")
        + ")"
    )


def summary_lines(con, limit: int = 10, sweeps_per_alert: int = 2) -> list[str]:
    """The run summary's lead: ``alerts: N (M open; newest first; alerts)``, one line per alert
    ([status] and its line), its largest sweeps under it, then "… and N more"."""
    leads, total, open_ = read_leads(con, limit, sweeps_per_alert)
    if not total:
        return ["alerts:    none (alerts)"]
    lines = [f"alerts:    {total:,} ({open_:,} open; newest first; alerts)"]
    for lead in leads:
        a = lead.alert
        lines.append(f"  [{a['status']}] {a['alert_id']} {a['line']}")
        shown = lead.sweeps
        lines += [f"      {sweep_text(s)}" for s in shown]
        if a["sweeps"] > len(shown) and shown:
            lines.append(f"      … and {a['sweeps'] - len(shown):,} more sweep(s)")
    if total > len(leads):
        lines.append(f"  … and {total - len(leads):,} more alerts; see the report")
    return lines
