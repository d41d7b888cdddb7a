"""HTML of the dashboard: ``index.html`` (explorer + per-GPU overview) and one page per release.

Every data string is escaped here (``html.escape``) or, on the index, placed by the page's script
with ``textContent``; the payload sits in a JSON script element that cannot be closed from the data
(``payload.payload_json``). Nothing is loaded from the network: Plotly comes from ``plotly.min.js``
beside the pages.
"""

from __future__ import annotations

import hashlib
import re
from html import escape
from pathlib import Path

from pipeline.analyze.report.queries import FLAGGED_VERDICTS, VersionCoverage

from .payload import Comparison, SiteData, payload_json

__all__ = ["PLOTLY_FILE", "index_html", "release_file_name", "release_html"]

PLOTLY_FILE = "plotly.min.js"
_HERE = Path(__file__).resolve().parent
VERDICT_COLORS = {
    "regression": "#d62728",
    "improvement": "#2ca02c",
    "drift": "#ff7f0e",
    "unstable": "#9467bd",
    "unchanged": "#7f7f7f",
    "insufficient": "#b0b0b0",
}
_FILTERS = (
    ("f-kernel", "kernel"),
    ("f-mode", "pass"),
    ("f-metric", "metric"),
    ("f-gpu", "GPU"),
    ("f-provider", "provider"),
    ("f-variant", "x · config"),
    ("f-ref", "reference (dashed)"),
)


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def release_file_name(version: str) -> str:
    """``release-<version>.html``; characters outside [A-Za-z0-9._-] become ``_`` (+ a suffix so two
    versions never share a file)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", version)
    if safe != version:
        safe += "-" + hashlib.sha256(version.encode()).hexdigest()[:8]
    return f"release-{safe}.html"


def _head(title: str) -> str:
    css = (_HERE / "dashboard.css").read_text()
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)}</title><style>{css}</style></head><body>"
    )


def _badge(verdict: str | None) -> str:
    color = VERDICT_COLORS.get(verdict or "", "#444")
    return f"<span class='badge' style='background:{color}'>{_e(verdict)}</span>"


def _ratio(value) -> str:
    return "" if value is None else f"×{value:.3f}"


def _pct(value, sign: str = "") -> str:
    return "" if value is None else f"{sign}{100 * value:.1f}%"


def _verdict_counts(verdicts: dict[str, int]) -> str:
    return " ".join(f"{_badge(v)} {n:,}" for v, n in verdicts.items()) or "none"


def _releases_table(coverage: list[VersionCoverage]) -> str:
    rows = []
    for c in coverage:
        if c.version is None:
            continue
        rows.append(
            f"<tr><td><a href='{_e(release_file_name(c.version))}'>{_e(c.version)}</a></td>"
            f"<td>{c.series:,}</td><td>{c.compared:,}</td><td>{_verdict_counts(c.verdicts)}</td>"
            f"<td>{_e(', '.join(f'{n:,} {r}' for r, n in list(c.reasons.items())[:3]))}</td></tr>"
        )
    return (
        "<div class='tablewrap'><table id='releases'><thead><tr><th>release</th><th>liger series</th>"
        "<th>compared</th><th>verdicts</th><th>not compared, mostly because</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def index_html(data: SiteData, coverage: list[VersionCoverage], headline: str, source_name: str) -> str:
    filters = "".join(f"<label for='{fid}'>{_e(label)}<select id='{fid}'></select></label>" for fid, label in _FILTERS)
    axis = "commits (ordered by release, then commit order)" if data.axis_mode == "commit" else "Liger versions"
    script = (_HERE / "dashboard.js").read_text()
    return "".join(
        [
            _head("Liger-Kernel benchmarks"),
            "<h1>Liger-Kernel benchmarks</h1>",
            f"<p class='muted'>Generated {_e(data.payload['generated'])} from <code>{_e(source_name)}</code>: "
            f"{len(data.sweeps):,} sweeps, {len(data.comparisons):,} judged version pairs, history over {axis}.</p>",
            f"<p class='headline' id='headline'>{_e(headline)}</p>",
            "<section id='explorer'><h2>Sweep history</h2>",
            f"<div class='filters'>{filters}"
            "<label for='f-log'>log y<input type='checkbox' id='f-log' checked></label></div>",
            "<h3 id='sweep-title'></h3><p id='sweep-config' class='muted'></p>",
            "<div id='plot'></div>",
            "<p class='muted'>One line per x point: the p50 (median over the runs of each point), its p20–p80 band "
            "shaded; the reference provider dashed. Shaded columns: flagged verdicts between two versions.</p>",
            "<h3>Verdicts of this sweep (sweep_regressions)</h3><div id='evidence'></div>",
            "<div id='suspects' hidden><h3>Suspect commits (commit_suspects)</h3><div class='list'></div></div>",
            "</section>",
            "<section id='overview-section'><h2>Overview per GPU</h2>",
            "<div class='filters'><label for='ov-gpu'>GPU<select id='ov-gpu'></select></label>"
            "<label for='ov-flagged'>latest change flagged only<input type='checkbox' id='ov-flagged'></label></div>",
            "<div id='overview'></div></section>",
            "<section id='releases-section'><h2>Releases</h2>",
            _releases_table(coverage),
            "</section>",
            f"<script src='{PLOTLY_FILE}'></script>",
            f"<script type='application/json' id='site-data'>{payload_json(data.payload)}</script>",
            f"<script>{script}</script>",
            "</body></html>",
        ]
    )


def _sweep_cells(sweep: dict) -> str:
    return "".join(
        f"<td>{_e(sweep[k])}</td>"
        for k in ("kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "gpu_name")
    )


def _config_cell(sweep: dict) -> str:
    return f"<td class='long'><code>{_e(sweep['x_name'])}</code> · <code>{_e(sweep['extra_config'])}</code></td>"


def _comparison_table(data: SiteData, rows: list[Comparison], table_id: str) -> str:
    head = (
        "",
        "kernel",
        "provider",
        "pass",
        "metric",
        "GPU",
        "x · config",
        "versions",
        "verdict",
        "ratio",
        "reference",
        "normalized",
        "threshold",
        "bands",
        "runs",
        "reason",
    )
    body = []
    for c in rows:
        s = data.sweeps[c.sweep]
        ref = f"{_e(c.reference_providers)} {_ratio(c.reference_ratio)}" if c.reference_providers else ""
        body.append(
            f"<tr><td><a href='index.html#s={c.sweep}'>plot</a></td>{_sweep_cells(s)}{_config_cell(s)}"
            f"<td>{_e(c.from_version)} → {_e(c.to_version)}</td><td>{_badge(c.verdict)}</td>"
            f"<td>{_ratio(c.ratio)}</td><td>{ref}</td><td>{_ratio(c.normalized_ratio)}</td>"
            f"<td>{_pct(c.threshold, '±')}</td><td>{_pct(c.band_fraction)}</td>"
            f"<td>{_e(c.from_runs)} / {_e(c.to_runs)}</td><td class='reason'>{_e(c.reason)}</td></tr>"
        )
    return (
        f"<div class='tablewrap'><table id='{table_id}'><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in head)
        + f"</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def release_html(data: SiteData, version: str, coverage: VersionCoverage | None) -> str:
    versions = data.versions
    i = versions.index(version)
    prev_link = (
        f"<a href='{_e(release_file_name(versions[i - 1]))}'>← {_e(versions[i - 1])}</a>" if i > 0 else "<span></span>"
    )
    next_link = (
        f"<a href='{_e(release_file_name(versions[i + 1]))}'>{_e(versions[i + 1])} →</a>"
        if i + 1 < len(versions)
        else "<span></span>"
    )
    compared = [c for c in data.comparisons if c.to_version == version and c.verdict != "insufficient"]
    moved = [c for c in compared if c.verdict in FLAGGED_VERDICTS]
    unchanged = [c for c in compared if c.verdict not in FLAGGED_VERDICTS]
    not_compared = data.not_compared.get(version, [])
    parts = [
        _head(f"Liger {version}"),
        f"<nav class='pager'>{prev_link}<a href='index.html'>dashboard</a>{next_link}</nav>",
        f"<h1>Liger {_e(version)}</h1>",
    ]
    if coverage is not None:
        parts.append(f"<p class='headline' id='summary'>{_e(coverage.sentence())}</p>")
        parts.append(f"<p>Verdicts of the compared sweeps: {_verdict_counts(coverage.verdicts)}</p>")
    labels = data.axis_labels_by_version.get(version, [])
    if data.axis_mode == "commit" and labels:
        parts.append(
            f"<p class='muted'>Measured at {len(labels):,} commit(s): "
            f"{_e(', '.join(labels[:50]))}{' …' if len(labels) > 50 else ''}</p>"
        )
    parts.append(f"<h2>What moved ({len(moved):,})</h2>")
    parts.append(
        _comparison_table(data, moved, "moved")
        if moved
        else "<p class='muted'>No sweep compared at this release moved beyond its noise.</p>"
    )
    parts.append(
        f"<details><summary>Compared and unchanged ({len(unchanged):,})</summary>"
        f"{_comparison_table(data, unchanged, 'unchanged')}</details>"
    )
    rows = "".join(
        f"<tr>{_sweep_cells(r)}{_config_cell(r)}<td>{_e(r['reason'])}</td><td>{_e(r['to_runs'])}</td></tr>"
        for r in not_compared
    )
    parts.append(
        f"<details><summary>Not compared ({len(not_compared):,})</summary><div class='tablewrap'>"
        "<table id='not-compared'><thead><tr><th>kernel</th><th>provider</th><th>pass</th><th>metric</th>"
        "<th>GPU</th><th>x · config</th><th>why not</th><th>runs</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></div></details>"
    )
    parts.append("</body></html>")
    return "".join(parts)
