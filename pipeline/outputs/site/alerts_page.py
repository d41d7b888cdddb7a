"""The dashboard's alerts: ``alerts.html`` (every alert, one line each, its sweeps plotted together
on one figure and listed with a link to each sweep's plot on ``index.html``) and the short list
``index.html`` leads with. Built from the `alerts` view and the payload the index already holds:
each plotted line is a sweep's geomean p50 over its x points per step, relative to its level at
the alert's `from` step; the alert's range is shaded. A commit-axis alert is plotted on the commit
axis alone, in commit order (`commit_order`, main's first-parent order), never by the dashboard's
axis (commits grouped by version) nor with release-only points; a version-axis alert on the
dashboard's axis, which is in version order. The figure names its categories in that order
(Plotly would otherwise order them as the traces first meet them). Every data string is escaped (HTML) or placed
as JSON that cannot close its script element (`payload_json`)."""

from __future__ import annotations

import math
from html import escape

from pipeline.outputs.alerts.lead import Lead, read_leads, sweep_text
from pipeline.regress.judge import SWEEP_KEY

from .bisect_results import queue_line, result_line, results_of
from .pages import plotly_text_js
from .payload import SiteData, payload_json, sig4
from .points import sweep_p50s

ALERTS_PAGE = "alerts.html"
ALERTS_SHOWN = 200
SWEEPS_PLOTTED = 30
INDEX_LEAD = 10
_MEMBER_KEY = ("kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "gpu_name", "x_name")

_SCRIPT = """
const figures = JSON.parse(document.getElementById('alert-data').textContent);
for (const [id, fig] of Object.entries(figures)) {
  const div = document.getElementById('plot-' + id);
  if (!div) continue;
  // names and axis labels are data: text for Plotly, never markup (plotly_text.js)
  Plotly.newPlot(div, fig.traces.map(t => ({x: t.x.map(plotlyText), y: t.y, name: plotlyText(t.name),
                                            mode: 'lines+markers', type: 'scatter'})),
    {height: 320, margin: {l: 50, r: 10, t: 10, b: 80}, yaxis: {type: 'log', title: 'relative to the from step'},
     xaxis: {tickangle: -45, type: 'category', categoryorder: 'array', categoryarray: fig.order.map(plotlyText)},
     showlegend: true, legend: {font: {size: 10}},
     shapes: fig.range ? [{type: 'rect', xref: 'x', yref: 'paper', x0: plotlyText(fig.range[0]),
       x1: plotlyText(fig.range[1]), y0: 0, y1: 1, fillcolor: 'rgba(214,39,40,0.12)', line: {width: 0}}] : []},
    {displayModeBar: false, responsive: true});
}
"""


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def _sweep_ids(data: SiteData) -> dict[tuple, int]:
    """Payload sweep id by (kernel, provider, pass, metric, GPU, x_name, config)."""
    return {tuple(s[k] for k in SWEEP_KEY): i for i, s in enumerate(data.sweeps)}


def _key(member: dict) -> tuple:
    return (*(member[k] for k in _MEMBER_KEY), member["extra_config"])


def _levels(points: list[tuple[int, float]]) -> dict[int, float]:
    """A sweep's geomean p50 (4 significant digits, as the page has it) over its x points at each axis
    step, from its (axis position, p50) points (`sweep_p50s`)."""
    logs: dict[int, list[float]] = {}
    for ax, value in points:
        p50 = sig4(value)
        if p50 and p50 > 0:
            logs.setdefault(ax, []).append(math.log(p50))
    return {ax: math.exp(sum(v) / len(v)) for ax, v in sorted(logs.items())}


COMMIT_ORDER_SQL = """
select benchmarked_commit, min(commit_order) from sweep_points
where benchmarked_commit is not null and commit_order is not null group by 1
"""


def commit_orders(con, data: SiteData) -> dict[int, tuple]:
    """The sort key of each axis point that is a commit, by `commit_order` (empty on a version axis)."""
    labels = data.payload["axis"]["label"]
    if data.axis_mode != "commit":
        return {}
    order = {str(sha)[:8]: o for sha, o in con.execute(COMMIT_ORDER_SQL).fetchall()}
    return {i: (order[t.split(" ")[0]], i) for i, t in enumerate(labels) if t.split(" ")[0] in order}


def _axis_at(labels: list[str], label: str) -> int | None:
    return next((i for i, text in enumerate(labels) if text.split(" ")[0].startswith(label[:7])), None)


def _figure(data: SiteData, ids: dict, lead: Lead, orders: dict[int, tuple], points: dict) -> dict | None:
    labels = data.payload["axis"]["label"]
    a = lead.alert
    if a["axis"] == "commit" and data.axis_mode != "commit":
        return None  # a commit alert needs the commit axis
    if a["axis"] != "commit":  # the dashboard's axis is in version order (commits grouped by version)
        orders = {i: (i,) for i in range(len(labels))}
    start = _axis_at(labels, a["from_label"]) if a["axis"] == "commit" else None
    end = _axis_at(labels, a["to_label"]) if start is not None else None
    traces, seen, shown = [], set(), set()
    for member in lead.sweeps:
        sid = ids.get(_key(member))
        if sid is None or sid in seen:
            continue
        seen.add(sid)
        levels = {ax: v for ax, v in _levels(points.get(_key(member), [])).items() if ax in orders}
        steps = sorted(levels, key=orders.__getitem__)
        base = levels.get(start) if start is not None else None
        base = base or (levels[steps[0]] if steps else None)
        if not base:
            continue
        shown.update(steps)
        name = f"{member['kernel_name']} {member['kernel_operation_mode']} {member['metric_name']}"
        traces.append({"x": [labels[ax] for ax in steps], "y": [levels[ax] / base for ax in steps], "name": name})
    if not traces:
        return None
    return {
        "traces": traces,
        "order": [labels[ax] for ax in sorted(shown, key=orders.__getitem__)],
        "range": [labels[start], labels[end]] if end is not None else None,
    }


def _sweep_items(ids: dict, lead: Lead) -> str:
    items = []
    for member in lead.sweeps:
        sid = ids.get(_key(member))
        link = f"<a href='index.html#s={sid}'>plot</a> " if sid is not None else ""
        items.append(f"<li>{link}{_e(sweep_text(member))} <span class='muted'>{_e(member['extra_config'])}</span></li>")
    more = lead.alert["pairs"] - len(lead.sweeps)
    if more > 0:
        items.append(f"<li>… and {more:,} more pair(s): <code>select * from alert_members</code></li>")
    return "".join(items)


def _bisects(lead: Lead, bisect_results: list[dict], queued: dict[str, dict]) -> str:
    kernels = set(lead.alert.get("kernel_names") or ()) | {m["kernel_name"] for m in lead.sweeps}
    entry = queued.get(lead.alert["alert_id"])
    lines = [queue_line(entry)] if entry else []
    lines += [result_line(r) for r in results_of(lead.alert, kernels, bisect_results)]
    return f"<ul class='bisects'>{''.join(lines)}</ul>" if lines else ""


def alerts_html(
    con, data: SiteData, head: str, plotly_file: str, bisect_results: list[dict] = (), queued: dict | None = None
) -> str:
    """``alerts.html``: every alert (newest first) with its sweeps plotted on one figure, its queued
    bisect plan and the bisect results that answer it."""
    leads, total, open_ = read_leads(con, ALERTS_SHOWN, SWEEPS_PLOTTED)
    ids, orders = _sweep_ids(data), commit_orders(con, data)
    members = {_key(m) for lead in leads for m in lead.sweeps if _key(m) in ids}
    points = sweep_p50s(con, data.source, sorted(members, key=str)) if data.source else {}
    figures, parts = {}, []
    for lead in leads:
        a = lead.alert
        figure = _figure(data, ids, lead, orders, points)
        if figure is not None:
            figures[a["alert_id"]] = figure
        parts.append(
            f"<section class='alert' id='{_e(a['alert_id'])}'><h3><span class='badge status'>{_e(a['status'])}</span> "
            f"<code>{_e(a['alert_id'])}</code></h3><p>{_e(a['line'])}</p>"
            + (f"<div class='alert-plot' id='plot-{_e(a['alert_id'])}'></div>" if figure else "")
            + _bisects(lead, bisect_results, queued or {})
            + f"<ul>{_sweep_items(ids, lead)}</ul></section>"
        )
    return "".join(
        [
            head,
            "<h1>Alerts</h1>",
            f"<p class='muted'><a href='index.html'>← sweep history</a>. {total:,} alerts, {open_:,} open; "
            "one per GPU, direction and group of flagged steps whose ranges overlap (docs/regressions.md, "
            "<em>Alerts</em>).</p>",
            *(parts or ["<p><em>No flagged step on either axis.</em></p>"]),
            f"<script src='{plotly_file}'></script>",
            f"<script type='application/json' id='alert-data'>{payload_json(figures)}</script>",
            f"<script>{plotly_text_js()}{_SCRIPT}</script>",
            "</body></html>",
        ]
    )


def index_lead_html(con) -> str:
    """What index.html leads with: the newest alerts, one line each, linking to ``alerts.html``."""
    leads, total, open_ = read_leads(con, INDEX_LEAD, 0)
    if not total:
        return "<section id='alerts-lead'><h2>Alerts</h2><p><em>No flagged step on either axis.</em></p></section>"
    items = "".join(
        f"<li><a href='{ALERTS_PAGE}#{_e(x.alert['alert_id'])}'>{_e(x.alert['status'])}</a> {_e(x.alert['line'])}</li>"
        for x in leads
    )
    more = f"<li><a href='{ALERTS_PAGE}'>… and {total - len(leads):,} more</a></li>" if total > len(leads) else ""
    return (
        f"<section id='alerts-lead'><h2>Alerts ({total:,}, {open_:,} open)</h2>"
        f"<ul class='alerts'>{items}{more}</ul></section>"
    )
