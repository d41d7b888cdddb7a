"""Regression report: ``regressions.html`` (plots embedded) and ``regressions.md`` (+ ``plots/*.png``).

``write_report(db_path, out_dir, max_plots=30)`` opens the warehouse read-only and writes:

* first, the alerts, one line each with their largest sweeps under it (``report/alerts.py``);
* then the per-commit trend of every flagged commit sweep (``commit_regressions``; at most
  ``max_plots`` plots) and the suspect commits of the commit regressions (``commit_suspects``),
  from ``report/commits.py``;
* the newest version's headline: its verdicts and how many of its series were
  compared at all, so "no regressions" never hides "nothing compared";
* coverage per version (``version_coverage``): series, compared, verdicts, and
  why the others were not compared;
* one table of every flagged sweep (regression, unstable, drift, improvement),
  newest version first, then by severity, with runs per side, thresholds as
  percentages and a hint for launch-bound sweeps;
* at most ``max_plots`` plots, for the first sweeps of that table;
* point-level regressions of the newest version, change points and the noise
  floor, each capped with a note of how many rows the view holds.

Cost is bounded by ``max_plots`` and the number of flagged sweeps: tables are
rendered inside DuckDB and the plot query fetches the points of the plotted
sweeps only. Pure: no Dagster imports. Every file is written aside and renamed.
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.common import duck
from pipeline.common.files import write_atomic
from pipeline.outputs.markdown import md_code, md_text
from pipeline.outputs.report.alerts import alert_section_html, alert_section_markdown, read_alert_section
from pipeline.outputs.report.commits import (
    CommitSection,
    commit_section_html,
    commit_section_markdown,
    read_commit_section,
)
from pipeline.outputs.report.launch import install_launch_macro, launch_hints_sql
from pipeline.outputs.report.plot import Plot, PlotBatch, plot_sweep
from pipeline.outputs.report.queries import (
    FLAGGED_VERDICTS,
    coverage_by_version,
    newest_overview,
    newest_regressions,
)
from pipeline.outputs.report.tables import (
    Column,
    config_html_sql,
    install_macros,
    number_sql,
    percent_sql,
    ratio_sql,
    render_table,
)
from pipeline.regress.judge import SEVERITY_SQL, SWEEP_KEY

__all__ = ["write_report", "plot_sweep", "FLAGGED_VERDICTS", "DEFAULT_MAX_PLOTS"]

# Per section (version plots, per-commit trends). Drawing is most of a report's cost (matplotlib's
# text and tick layout; a plot is drawn again only when its sweep changes), so the plots are capped,
# and every flagged sweep is listed in the tables whether plotted or not.
DEFAULT_MAX_PLOTS = 15
# A plot draws the judged pair and the versions of its sweep nearest it, a grey line each: a deep history
# (a version a week for years) drew a line per version, unreadable and most of the report's time.
PLOT_VERSIONS = 24
POINT_ROWS_SHOWN = 50
CHANGE_POINTS_SHOWN = 50
NOISE_GROUPS_SHOWN = 30
_SAME_SWEEP = " and ".join(f"sv.{k} is not distinct from f.{k}" for k in SWEEP_KEY if k != "kernel_provider")
_PERCENT_SETTINGS = {"min_noise_floor", "sweep_min_band_fraction"}

# every flagged sweep, numbered in plot order (a table: the report reads it four times): newest version
# first, then the worst verdict, then the largest change (normalized by the reference where there is one)
_FLAGGED_TABLE = f"""
create or replace temp table report_flagged as
select
    *,
    row_number() over (
        order by is_newest desc, {SEVERITY_SQL},
            abs(ln(coalesce(geomean_normalized_ratio, geomean_ratio))) desc nulls last,
            to_version_rank desc, {", ".join(SWEEP_KEY)}
    ) as plot_rank
from sweep_regressions
where verdict in {FLAGGED_VERDICTS!r}
"""

# the launch-bound hint: one rule, in pipeline/outputs/report/launch.py
_LAUNCH_HINT_TABLE = "create or replace temp table report_launch_hints as " + launch_hints_sql(
    "report_flagged", _SAME_SWEEP
)

# The plotted sweeps are a temp table, not a CTE over report_flagged: through the CTE (a window over
# sweep_regressions) DuckDB did not filter series_versions by the few plotted sweeps before joining
# and read every version of every series (bench/HISTORY.md, issue 57).
_PLOTTED_TABLE = "create or replace temp table report_plotted as select * from report_flagged where plot_rank <= ?"

_PLOT_POINTS_SQL = f"""
with own_versions as (
    select plot_rank, version_rank
    from (
        select distinct f.plot_rank, f.from_version_rank, f.to_version_rank, sv.version_rank
        from report_plotted as f join series_versions as sv
            on {_SAME_SWEEP} and sv.kernel_provider = f.kernel_provider
    )
    qualify version_rank in (from_version_rank, to_version_rank) or row_number() over (
        partition by plot_rank order by abs(version_rank - to_version_rank), version_rank desc
    ) <= {PLOT_VERSIONS}
)
select f.plot_rank, sv.kernel_provider, sv.is_liger, sv.liger_version, sv.version_rank,
       sv.x_value, sv.x_numeric, sv.p20, sv.p50, sv.p80
from report_plotted as f
join series_versions as sv
    on {_SAME_SWEEP} and (sv.kernel_provider = f.kernel_provider or not sv.is_liger)
join own_versions as v
    on v.plot_rank = f.plot_rank and v.version_rank = sv.version_rank
order by f.plot_rank, sv.kernel_provider, sv.version_rank, sv.x_numeric nulls last, sv.x_value
"""

_FLAGGED_SOURCE = """
select report_flagged.*, report_launch_hints.hint
from report_flagged left join report_launch_hints using (plot_rank)
"""


def _flagged_columns(max_plots: int) -> tuple[Column, ...]:
    return (
        Column(
            "#",
            number_sql("plot_rank"),
            html=f"case when plot_rank <= {int(max_plots)} then '<a href=\"#plot-' || plot_rank || '\">' "
            "|| plot_rank || '</a>' else cast(plot_rank as varchar) end",
        ),
        Column("versions", "from_version || ' → ' || to_version"),
        Column("kernel", "kernel_name"),
        Column("provider", "kernel_provider"),
        Column("mode", "kernel_operation_mode"),
        Column("metric", "metric_name"),
        Column("GPU", "gpu_name"),
        Column("config", "extra_config", html=config_html_sql("extra_config"), css="'config'"),
        Column("points", number_sql("shared_points")),
        Column("runs (from / to)", "cast(from_runs as varchar) || ' / ' || cast(to_runs as varchar)"),
        Column("ratio", ratio_sql("geomean_ratio")),
        Column("reference", ratio_sql("geomean_reference_ratio")),
        Column("normalized", ratio_sql("geomean_normalized_ratio")),
        Column("threshold", percent_sql("threshold", "±")),
        Column("verdict", "verdict", css="verdict"),
        Column("reason", "reason", css="'reason'"),
        Column("hint", "hint", css="'hint'"),
    )


_POINT_COLUMNS = (
    Column("kernel", "kernel_name"),
    Column("provider", "kernel_provider"),
    Column("mode", "kernel_operation_mode"),
    Column("metric", "metric_name"),
    Column("GPU", "gpu_name"),
    Column("x", "x_name"),
    Column("x value", "x_value"),
    Column("versions", "from_version || ' → ' || to_version"),
    Column("ratio", ratio_sql("ratio")),
    Column("normalized", ratio_sql("normalized_ratio")),
    Column("reason", "reason"),
)
_CHANGE_POINT_COLUMNS = (
    Column("kernel", "kernel_name"),
    Column("provider", "kernel_provider"),
    Column("mode", "kernel_operation_mode"),
    Column("metric", "metric_name"),
    Column("GPU", "gpu_name"),
    Column("from", "previous_version"),
    Column("introduced in", "version"),
    Column("direction", "direction"),
    Column("shift", ratio_sql("shift_ratio")),
    Column("basis", "basis"),
    Column("pair verdict", "pair_verdict"),
)
_NOISE_COLUMNS = (
    Column("scope", "scope"),
    Column("kernel", "kernel_name"),
    Column("provider", "kernel_provider"),
    Column("mode", "kernel_operation_mode"),
    Column("metric", "metric_name"),
    Column("GPU", "gpu_name"),
    Column("re-run points", number_sql("rerun_points")),
    Column("median re-run move", percent_sql("median_rel_spread")),
    Column("noise", percent_sql("noise_rel_spread")),
    Column("threshold", percent_sql("threshold", "±")),
)


def _plot_stem(sweep: dict) -> str:
    safe = "".join(
        c if c.isalnum() else "_"
        for c in f"{sweep['kernel_name']}_{sweep['kernel_operation_mode']}_{sweep['metric_name']}"
    )
    return f"{safe}_{sweep['to_version']}".replace(".", "-")


def _records(con, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _plots(con, max_plots: int, batch: PlotBatch) -> list[tuple[dict, Plot]]:
    """(sweep, plot) for the first ``max_plots`` flagged sweeps; two queries in all. A plot whose sweep
    and points are unchanged is read back from the batch's folder, not drawn again."""
    con.execute(_PLOTTED_TABLE, [max_plots])
    sweeps = _records(con, "select * from report_plotted order by plot_rank")
    points: dict[int, list[dict]] = {}
    for p in _records(con, _PLOT_POINTS_SQL):
        points.setdefault(p["plot_rank"], []).append(p)
    plots = []
    for sweep in sweeps:
        shown = points.get(sweep["plot_rank"], [])
        # plot_rank only orders the report: the same sweep moved down a place is the same plot
        content = [{k: v for k, v in sweep.items() if k != "plot_rank"}, [_without_rank(p) for p in shown]]
        plots.append((sweep, batch.add(_plot_stem(sweep), content, plot_sweep, shown, sweep)))
    return plots


def _without_rank(point: dict) -> dict:
    return {k: v for k, v in point.items() if k != "plot_rank"}


def _settings_text(settings: dict) -> str:
    def fmt(key, value):
        if key in _PERCENT_SETTINGS and isinstance(value, float):
            return f"{key} = {100 * value:g} %"
        return f"{key} = {value}"

    return ", ".join(fmt(k, v) for k, v in settings.items())


def _coverage_tables(coverage) -> tuple[str, str]:
    head = ("version", "series", "compared", "verdicts of the compared", "not compared, because")
    rows = [
        (
            c.version,
            f"{c.series:,}",
            f"{c.compared:,}",
            ", ".join(f"{n:,} {v}" for v, n in c.verdicts.items()),
            ", ".join(f"{n:,} {r}" for r, n in c.reasons.items()),
        )
        for c in coverage
    ]
    if not rows:
        return "<p><em>no liger-family series measured</em></p>", "_no liger-family series measured_\n"
    html_rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in r) + "</tr>" for r in rows)
    html_table = (
        f"<table id='coverage'><thead><tr>{''.join(f'<th>{h}</th>' for h in head)}</tr></thead>"
        f"<tbody>{html_rows}</tbody></table>"
    )
    md = (
        "| "
        + " | ".join(head)
        + " |\n|"
        + "|".join("---" for _ in head)
        + "|\n"
        + "".join("| " + " | ".join(md_text(v) for v in r) + " |\n" for r in rows)
    )
    return html_table, md


def _capped(shown: int, total: int, view: str) -> str:
    return f"Showing {shown:,} of {total:,}; query `{view}` for all." if shown < total else ""


_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:2em auto;padding:0 1.5em;max-width:1500px;color:#1a1a1a;background:#fff}
table{border-collapse:collapse;font-size:12px;margin:1em 0;width:100%}
td,th{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#eee;font-weight:600}
td.regression{background:#f7c6c6;font-weight:bold}td.improvement{background:#cdebd3}
td.drift{background:#fbe3b8}td.unstable{background:#e2d4f0}td.touches-true{background:#fbe3b8;font-weight:bold}
table#flagged{font-size:11px}
td.reason{min-width:15em}td.hint{min-width:7em}td.config{width:13em;max-width:13em}
details.config summary{cursor:pointer}
.chip{display:inline-block;max-width:100%;margin:0 2px 2px 0;padding:0 4px;border-radius:3px;
  background:#eef2f7;border:1px solid #d3dae3;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;
  vertical-align:top;font-family:ui-monospace,monospace;font-size:11px}
code.json{display:block;white-space:pre-wrap;overflow-wrap:anywhere;font-size:11px}
.none{color:#888}
.headline{font-size:1.1em;padding:.6em 1em;border-left:4px solid #D55E00;background:#fafafa}
figure{margin:1.5em 0}img{max-width:100%;border:1px solid #ddd}
code{background:#f3f3f3;padding:1px 3px;overflow-wrap:anywhere}
p,h3{overflow-wrap:anywhere}
"""


@dataclass(frozen=True)
class _Table:
    html: str
    md: str
    shown: int
    total: int


@dataclass(frozen=True)
class _Contents:
    """Everything the report shows, read in one session."""

    newest: Any
    coverage: list
    settings: dict
    flagged: _Table
    points: _Table
    change_points: _Table
    noise: _Table
    plots: list[tuple[dict, Plot]]
    commits: CommitSection
    alerts: tuple = ([], 0, 0)  # the lead: report/alerts.py
    newest_regressed: tuple = ()  # the newest version's worst regressed sweeps (`newest_regressions`)


def _read_contents(con, max_plots: int, plot_dir: Path) -> _Contents:
    install_macros(con)
    install_launch_macro(con)
    con.execute(_FLAGGED_TABLE)
    con.execute(_LAUNCH_HINT_TABLE)
    coverage = coverage_by_version(con)
    newest = newest_overview(con, coverage)
    batch = PlotBatch(plot_dir)
    contents = _Contents(
        newest=newest,
        coverage=coverage,
        settings=_records(con, "select * from regression_settings")[0],
        flagged=_Table(
            *render_table(con, _FLAGGED_SOURCE, _flagged_columns(max_plots), "plot_rank", table_id="flagged")
        ),
        points=_Table(
            *render_table(
                con,
                "select * from regressions where verdict = 'regression' and to_version = ?",
                _POINT_COLUMNS,
                "ratio desc, kernel_name, kernel_provider, x_value",
                params=[newest.version],
                limit=POINT_ROWS_SHOWN,
                table_id="points",
            )
        ),
        change_points=_Table(
            *render_table(
                con,
                "select * from change_points",
                _CHANGE_POINT_COLUMNS,
                "version_rank desc, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name",
                limit=CHANGE_POINTS_SHOWN,
                table_id="change-points",
            )
        ),
        noise=_Table(
            *render_table(
                con,
                "select * from noise_floor",
                _NOISE_COLUMNS,
                "case scope when 'overall' then 0 when 'metric' then 1 else 2 end, threshold desc, "
                "kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name",
                limit=NOISE_GROUPS_SHOWN,
                table_id="noise",
            )
        ),
        plots=_plots(con, max_plots, batch),
        commits=read_commit_section(con, max_plots, batch),
        alerts=read_alert_section(con),
        newest_regressed=tuple(newest_regressions(con)),
    )
    batch.draw()  # both sections' plots at once, side by side
    return contents


def _write_plots(plot_dir: Path, plots: list[tuple[str, bytes]]) -> None:
    """The plotted sweeps' PNGs; those of sweeps no longer plotted are removed. A name is its
    content's digest, so a PNG already there is left as it is."""
    written = {name for name, _ in plots}
    for name, png in plots:
        if not (plot_dir / name).exists():
            write_atomic(plot_dir / name, png)
    if plot_dir.exists():
        for stale in plot_dir.glob("*.png"):
            if stale.name not in written:
                stale.unlink(missing_ok=True)


@dataclass(frozen=True)
class _Texts:
    """The sentences both renderings share."""

    generated: str
    db_name: str
    version: str
    headline: str
    newest_sentence: str
    settings: str
    plotted: str
    max_plots: int
    intro: str = (
        "Verdicts judge liger-family providers per sweep and consecutive version pair (PEP 440 order); "
        "reference providers normalize away machine changes."
    )


def _texts(c: _Contents, db_path: Path, max_plots: int) -> _Texts:
    return _Texts(
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        db_name=db_path.name,
        version=str(c.newest.version),
        headline=c.newest.regressions_line(),
        newest_sentence=c.newest.sentence(),
        settings=_settings_text(c.settings),
        plotted=(
            f"{len(c.plots)} of {c.flagged.total:,} flagged sweeps plotted (the first {len(c.plots)} of the table; "
            f"max_plots = {max_plots})."
        ),
        max_plots=max_plots,
    )


def _plot_title(sweep: dict) -> str:
    return (
        f"#{sweep['plot_rank']} {sweep['verdict']}: {sweep['kernel_name']} / {sweep['kernel_provider']} / "
        f"{sweep['kernel_operation_mode']} / {sweep['metric_name']} / {sweep['gpu_name']} "
        f"{sweep['from_version']} → {sweep['to_version']} (runs {sweep['from_runs']} / {sweep['to_runs']})"
    )


def _markdown(c: _Contents, t: _Texts, coverage_md: str) -> str:
    md = [
        "# Liger regression report\n",
        f"Generated {t.generated} from {md_code(t.db_name)}. Newest version: **{md_text(t.version)}**.\n",
        *alert_section_markdown(c.alerts),
        *commit_section_markdown(c.commits, t.max_plots),
        "\n## Newest version\n",
        f"**{md_text(t.headline)}**\n",
        f"{md_text(t.newest_sentence)}.\n",
        t.intro + "\n",
        f"Settings: {t.settings}.\n",
        "## Coverage per version\n",
        coverage_md,
        "\n## Flagged sweeps (newest version first, then by severity)\n",
        t.plotted + "\n",
        c.flagged.md,
        f"\n## Point-level regressions in {md_text(t.version)}\n",
        _capped(c.points.shown, c.points.total, "regressions"),
        c.points.md,
        "\n## Plots\n",
    ]
    if not c.plots:
        md.append("_none_\n")
    for sweep, plot in c.plots:
        title = md_text(_plot_title(sweep))
        md.append(
            f"\n### {title}\n\n{md_text(sweep['reason'])}\n\n`extra_config`: {md_code(sweep['extra_config'])}\n\n"
            f"![{title}](plots/{plot.name})\n"
        )
    md += [
        "\n## Change points\n",
        _capped(c.change_points.shown, c.change_points.total, "change_points"),
        c.change_points.md,
        "\n## Noise floor (threshold = the change a verdict must exceed)\n",
        _capped(c.noise.shown, c.noise.total, "noise_floor"),
        c.noise.md,
    ]
    return "\n".join(md)


def _html(c: _Contents, t: _Texts, coverage_html: str) -> str:
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>Liger regression report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Liger regression report</h1>",
        f"<p>Generated {html.escape(t.generated)} from <code>{html.escape(t.db_name)}</code>. "
        f"Newest version: <b>{html.escape(t.version)}</b>.</p>",
        *alert_section_html(c.alerts),
        *commit_section_html(c.commits, t.max_plots),
        "<h2 id='newest'>Newest version</h2>",
        f"<p class='headline' id='headline'><b>{html.escape(t.headline)}</b><br>{html.escape(t.newest_sentence)}.</p>",
        f"<p>{html.escape(t.intro)}</p><p>Settings: <code>{html.escape(t.settings)}</code></p>",
        "<h2>Coverage per version</h2>",
        coverage_html,
        "<h2>Flagged sweeps (newest version first, then by severity)</h2>",
        f"<p>{html.escape(t.plotted)}</p>",
        c.flagged.html,
        f"<h2>Point-level regressions in {html.escape(t.version)}</h2>",
        f"<p>{html.escape(_capped(c.points.shown, c.points.total, 'regressions'))}</p>",
        c.points.html,
        "<h2>Plots</h2>",
    ]
    if not c.plots:
        parts.append("<p><em>none</em></p>")
    for sweep, plot in c.plots:
        title = _plot_title(sweep)
        b64 = base64.b64encode(plot.png).decode()
        parts.append(
            f"<figure id='plot-{sweep['plot_rank']}'><h3>{html.escape(title)}</h3>"
            f"<p>{html.escape(sweep['reason'] or '')}</p><p><code>{html.escape(str(sweep['extra_config']))}</code></p>"
            f"<img alt='{html.escape(title)}' src='data:image/png;base64,{b64}'></figure>"
        )
    parts += [
        "<h2>Change points</h2>",
        f"<p>{html.escape(_capped(c.change_points.shown, c.change_points.total, 'change_points'))}</p>",
        c.change_points.html,
        "<h2>Noise floor (threshold = the change a verdict must exceed)</h2>",
        f"<p>{html.escape(_capped(c.noise.shown, c.noise.total, 'noise_floor'))}</p>",
        c.noise.html,
        "</body></html>",
    ]
    return "\n".join(parts)


def write_report(
    db_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    max_plots: int = DEFAULT_MAX_PLOTS,
    remote_root: str | None = None,
) -> dict:
    """Write ``regressions.html`` and ``regressions.md`` (+ ``plots/*.png``) into ``out_dir``."""
    db_path, out_dir = Path(db_path), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with duck.open_readonly(db_path, remote_root or "") as con:
        c = _read_contents(con, max_plots, out_dir / "plots")
    _write_plots(
        out_dir / "plots", [(p.name, p.png) for _, p in c.plots] + [(t.plot.name, t.plot.png) for t in c.commits.trends]
    )
    texts = _texts(c, db_path, max_plots)
    coverage_html, coverage_md = _coverage_tables(c.coverage)
    md_path, html_path = out_dir / "regressions.md", out_dir / "regressions.html"
    write_atomic(md_path, _markdown(c, texts, coverage_md).encode())
    write_atomic(html_path, _html(c, texts, coverage_html).encode())
    return {
        "newest_version": c.newest.version,
        "newest_series": c.newest.series,
        "newest_compared": c.newest.compared,
        "newest_verdicts": dict(c.newest.verdicts),
        "newest_reasons": dict(c.newest.reasons),
        "newest_regressions": list(c.newest_regressed),
        "newest_version_regressions": c.newest.verdicts.get("regression", 0),
        "flagged_sweeps": c.flagged.total,
        "plots": len(c.plots),
        "commit_flagged_sweeps": c.commits.groups,
        "commit_trend_plots": len(c.commits.trends),
        "suspect_rows": c.commits.suspects_total,
        "change_points": c.change_points.total,
        "html_path": str(html_path),
        "md_path": str(md_path),
    }
