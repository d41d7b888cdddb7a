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

from pipeline.outputs.report.queries import FLAGGED_VERDICTS, VersionCoverage

from .payload import SiteData, payload_json

__all__ = ["PLOTLY_FILE", "index_html", "plotly_text_js", "release_file_name", "release_html"]

PLOTLY_FILE = "plotly.min.js"
_HERE = Path(__file__).resolve().parent


def plotly_text_js() -> str:
    """``plotlyText(text)``: the one rule for data text handed to Plotly, on every page that plots."""
    return (_HERE / "plotly_text.js").read_text()


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


# a verdict's badge: its colour goes between the first two parts, the verdict (escaped) between the last two
_BADGE = ("<span class='badge' style='background:", "'>", "</span>")


def _badge(verdict: str | None) -> str:
    color = VERDICT_COLORS.get(verdict or "", "#444")
    return f"{_BADGE[0]}{color}{_BADGE[1]}{_e(verdict)}{_BADGE[2]}"


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


def index_html(
    data: SiteData, coverage: list[VersionCoverage], headline: str, source_name: str, alerts_lead: str = ""
) -> str:
    filters = "".join(f"<label for='{fid}'>{_e(label)}<select id='{fid}'></select></label>" for fid, label in _FILTERS)
    axis = "commits (ordered by release, then commit order)" if data.axis_mode == "commit" else "Liger versions"
    if data.window is not None and data.window.cut:
        axis += (
            f": the newest {data.window.shown:,} of {data.window.of:,} (LIGER_DASHBOARD_AXIS_POINTS; the whole "
            "history is in liger.duckdb, <code>make sql</code>)"
        )
    script = plotly_text_js() + (_HERE / "dashboard.js").read_text()
    return "".join(
        [
            _head("Liger-Kernel benchmarks"),
            "<h1>Liger-Kernel benchmarks</h1>",
            f"<p class='muted'>Generated {_e(data.payload['generated'])} from <code>{_e(source_name)}</code>: "
            f"{len(data.sweeps):,} sweeps, {len(data.comparisons):,} judged version pairs, history over {axis}.</p>",
            alerts_lead,  # already escaped (alerts_page.index_lead_html)
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


# The release pages' tables hold every judged pair and every sweep not compared (tens of thousands of
# rows at 1 M facts): their rows are written by polars expressions, column by column, never a Python
# call per row. `_escaped` is `_e` (html.escape with quotes) for a column.
def _escaped(column: str):
    import polars as pl

    expr = pl.col(column).cast(pl.String).fill_null("")
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#x27;")):
        expr = expr.str.replace_all(raw, entity, literal=True)
    return expr


def _cells(*parts) -> object:
    """One HTML text per row: the parts (polars expressions, or literal HTML) joined."""
    import polars as pl

    return pl.concat_str([pl.lit(p) if isinstance(p, str) else p for p in parts])


def _sweep_cells_expr() -> list:
    cells: list = []
    for k in ("kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "gpu_name"):
        cells += ["<td>", _escaped(k), "</td>"]
    return [*cells, "<td class='long'><code>", _escaped("x_name"), "</code> · <code>", _escaped("extra_config"),
            "</code></td>"]  # fmt: skip


def _comparison_rows(comparisons) -> object:
    """Each comparison's table row (`_comparison_table`)."""
    import polars as pl

    badge_color = pl.col("verdict").replace_strict(VERDICT_COLORS, default="#444", return_dtype=pl.String)
    reference = pl.when(pl.col("reference_providers").fill_null("") != "").then(
        pl.concat_str([_escaped("reference_providers"), pl.lit(" "), pl.col("reference_ratio_text")])
    ).otherwise(pl.lit(""))  # fmt: skip
    return comparisons.select(
        _cells(
            "<tr><td><a href='index.html#s=", pl.col("sweep").cast(pl.String), "'>plot</a></td>", *_sweep_cells_expr(),
            "<td>", _escaped("from_version"), " → ", _escaped("to_version"), "</td>",
            "<td>", _BADGE[0], badge_color, _BADGE[1], _escaped("verdict"), _BADGE[2], "</td>",
            "<td>", pl.col("ratio_text"), "</td><td>", reference, "</td>",
            "<td>", pl.col("normalized_ratio_text"), "</td><td>", pl.col("threshold_text"), "</td>",
            "<td>", pl.col("band_fraction_text"), "</td>",
            "<td>", _escaped("from_runs"), " / ", _escaped("to_runs"), "</td><td class='reason'>", _escaped("reason"),
            "</td></tr>",
        ).alias("html")
    )["html"]  # fmt: skip


_COMPARISON_HEAD = (
    "", "kernel", "provider", "pass", "metric", "GPU", "x · config", "versions", "verdict", "ratio", "reference",
    "normalized", "threshold", "bands", "runs", "reason",
)  # fmt: skip


def _comparison_table(rows: list[str], table_id: str) -> str:
    return (
        f"<div class='tablewrap'><table id='{table_id}'><thead><tr>"
        + "".join(f"<th>{h}</th>" for h in _COMPARISON_HEAD)
        + f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def release_rows(data: SiteData) -> dict[str, tuple[object, object]]:
    """Per version: its comparisons and its not-compared sweeps with each row's HTML (``html``), written
    for every page at once and split by version once (a filter per page read every row, once a page)."""
    comparisons = data.comparisons.with_columns(html=_comparison_rows(data.comparisons))
    comparisons = comparisons.select("to_version", "verdict", "html")
    not_compared = data.not_compared.with_columns(
        html=_cells("<tr>", *_sweep_cells_expr(), "<td>", _escaped("reason"), "</td><td>", _escaped("to_runs"),
                    "</td></tr>")
    ).select("version", "html")  # fmt: skip
    judged = comparisons.partition_by("to_version", as_dict=True)
    missing = not_compared.partition_by("version", as_dict=True)
    empty = (comparisons.clear(), not_compared.clear())
    return {v: (judged.get((v,), empty[0]), missing.get((v,), empty[1])) for v in data.versions}


def release_html(data: SiteData, version: str, coverage: VersionCoverage | None, rows: tuple) -> str:
    """One release's page; ``rows``: the version's own of `release_rows(data)`, written once for all the pages."""
    import polars as pl

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
    comparisons, not_compared = rows
    compared = comparisons.filter(pl.col("verdict").ne_missing("insufficient"))
    flagged = pl.col("verdict").is_in(FLAGGED_VERDICTS).fill_null(False)
    moved = compared.filter(flagged)["html"].to_list()
    unchanged = compared.filter(~flagged)["html"].to_list()
    not_compared = not_compared["html"].to_list()
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
        _comparison_table(moved, "moved")
        if moved
        else "<p class='muted'>No sweep compared at this release moved beyond its noise.</p>"
    )
    parts.append(
        f"<details><summary>Compared and unchanged ({len(unchanged):,})</summary>"
        f"{_comparison_table(unchanged, 'unchanged')}</details>"
    )
    parts.append(
        f"<details><summary>Not compared ({len(not_compared):,})</summary><div class='tablewrap'>"
        "<table id='not-compared'><thead><tr><th>kernel</th><th>provider</th><th>pass</th><th>metric</th>"
        "<th>GPU</th><th>x · config</th><th>why not</th><th>runs</th></tr></thead>"
        f"<tbody>{''.join(not_compared)}</tbody></table></div></details>"
    )
    parts.append("</body></html>")
    return "".join(parts)
