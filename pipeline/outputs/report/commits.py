"""The report's lead: the per-commit trend of every flagged commit sweep, then the suspect commits.

A trend groups the flagged rows of ``commit_regressions`` by sweep without its GPU (kernel,
provider, pass, metric, x_name, extra_config), so one plot shows every GPU the sweep was measured
on, one line each, with the reference providers beside them. Groups are ranked worst verdict
first, then newest flagged commit, then largest change; the first ``max_plots`` are drawn (the
report's own plot cap, spent separately from the version plots). Three queries fetch the lines,
flagged pairs and commit labels of the plotted groups only, so the cost follows ``max_plots``.

The suspects table lists ``commit_suspects`` for the commit regressions: one row per (kernel,
provider, GPU, range, commit) with the regressed sweeps it stands for, capped at
``SUSPECT_ROWS_SHOWN``. Pure: no Dagster imports.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass

from pipeline.outputs.markdown import md_code, md_text
from pipeline.outputs.report.plot import Plot, PlotBatch
from pipeline.outputs.report.queries import FLAGGED_VERDICTS
from pipeline.outputs.report.tables import Column, render_table
from pipeline.outputs.report.trend_plot import plot_commit_trend, release_label
from pipeline.regress.judge import SEVERITY_SQL

__all__ = ["CommitSection", "read_commit_section", "commit_section_html", "commit_section_markdown"]

SUSPECT_ROWS_SHOWN = 200
TREND_KEYS = ("kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "x_name", "extra_config")
_KEY_LIST = ", ".join(TREND_KEYS)
_SAME_GROUP = " and ".join(f"f.{k} is not distinct from g.{k}" for k in TREND_KEYS)

# one row per flagged sweep without its GPU, numbered in plot order
_GROUPS_VIEW = f"""
create or replace temp view report_commit_groups as
select
    {_KEY_LIST},
    max(metric_unit) as metric_unit,
    count(*) as flagged_pairs,
    row_number() over (
        order by min({SEVERITY_SQL}), max(to_commit_order) desc,
            max(abs(ln(coalesce(normalized_ratio, ratio)))) desc nulls last, {_KEY_LIST}
    ) as trend_rank
from commit_regressions
where verdict in {FLAGGED_VERDICTS!r}
group by {_KEY_LIST}
"""

_MARKS_SQL = f"""
select g.trend_rank, f.gpu_name, f.from_commit_order, f.to_commit_order, f.from_short_commit,
       f.to_short_commit, f.from_release, f.to_release, f.verdict, f.ratio, f.normalized_ratio, f.reason
from report_commit_groups as g
join commit_regressions as f on {_SAME_GROUP}
where g.trend_rank <= ? and f.verdict in {FLAGGED_VERDICTS!r}
order by g.trend_rank, f.to_commit_order, f.gpu_name
"""

# The sweep's level at a commit: the geomean of its p50 over x, each x taken relative to its own
# geomean over the commits (then scaled back by the geomean of those): with every x measured at
# every commit this is the plain geomean p50, and an x point measured at some commits only does
# not move the line where it is missing.
_LINES_SQL = """
with top as (
    select * from report_commit_groups where trend_rank <= ?
),
points as (
    select top.trend_rank, s.gpu_name, s.kernel_provider, s.is_liger, s.step_rank, s.x_value,
           ln(s.p50) as log_p50
    from top
    join series_steps as s
        on s.axis = 'commit'
        and s.kernel_name = top.kernel_name
        and s.kernel_operation_mode = top.kernel_operation_mode
        and s.metric_name = top.metric_name
        and s.x_name is not distinct from top.x_name
        and s.extra_config is not distinct from top.extra_config
        and (s.kernel_provider = top.kernel_provider or not s.is_liger)
    where s.p50 > 0
),
x_levels as (
    select trend_rank, gpu_name, kernel_provider, x_value, avg(log_p50) as x_level
    from points group by all
),
line_levels as (
    select trend_rank, gpu_name, kernel_provider, avg(x_level) as line_level
    from x_levels group by all
)
select p.trend_rank, p.gpu_name, p.kernel_provider, p.is_liger, p.step_rank,
       exp(avg(p.log_p50 - x.x_level) + max(l.line_level)) as level
from points as p
join x_levels as x
    on x.trend_rank = p.trend_rank and x.gpu_name is not distinct from p.gpu_name
    and x.kernel_provider = p.kernel_provider and x.x_value is not distinct from p.x_value
join line_levels as l
    on l.trend_rank = p.trend_rank and l.gpu_name is not distinct from p.gpu_name
    and l.kernel_provider = p.kernel_provider
group by p.trend_rank, p.gpu_name, p.kernel_provider, p.is_liger, p.step_rank
order by p.trend_rank, p.gpu_name, p.kernel_provider, p.step_rank
"""

_TICKS_SQL = "select commit_order, short_commit, release from commit_ranges order by commit_order"

# one row per kernel, provider, GPU, range and commit: the regressed sweeps it stands for listed
_SUSPECTS_SOURCE = """
select
    s.kernel_name, s.kernel_provider, s.gpu_name, s."commit", s.committed_at, s.subject, s.touches_kernel,
    r.from_short_commit, r.to_short_commit, r.from_release, r.to_release, r.to_commit_order,
    string_agg(distinct r.kernel_operation_mode || ' ' || r.metric_name, ', ') as sweeps,
    count(*) as sweep_count,
    min(g.trend_rank) as trend_rank
from commit_suspects as s
join commit_regressions as r
    on r.verdict = 'regression'
    and r.kernel_name = s.kernel_name and r.kernel_provider = s.kernel_provider
    and r.kernel_operation_mode = s.kernel_operation_mode and r.metric_name = s.metric_name
    and r.gpu_name = s.gpu_name and r.x_name is not distinct from s.x_name
    and r.extra_config is not distinct from s.extra_config
    and r.from_commit = s.from_commit and r.to_commit = s.to_commit
left join report_commit_groups as g
    on g.kernel_name = r.kernel_name and g.kernel_provider = r.kernel_provider
    and g.kernel_operation_mode = r.kernel_operation_mode and g.metric_name = r.metric_name
    and g.x_name is not distinct from r.x_name and g.extra_config is not distinct from r.extra_config
group by all
"""


def _range_sql(side: str) -> str:
    return f"{side}_short_commit || coalesce(' (v' || ltrim({side}_release, 'vV') || ')', '')"


def _suspect_columns(max_plots: int) -> tuple[Column, ...]:
    return (
        Column(
            "#",
            "cast(trend_rank as varchar)",
            html=f"case when trend_rank <= {int(max_plots)} then '<a href=\"#trend-' || trend_rank || '\">' "
            "|| trend_rank || '</a>' else cast(trend_rank as varchar) end",
        ),
        Column("kernel", "kernel_name"),
        Column("provider", "kernel_provider"),
        Column("GPU", "gpu_name"),
        Column("range", f"{_range_sql('from')} || '..' || {_range_sql('to')}"),
        Column("regressed sweeps", "sweeps || case when sweep_count > 1 then ' (' || sweep_count || ')' else '' end"),
        Column("commit", 'left("commit", 7)', html="'<code>' || html_text(left(\"commit\", 7)) || '</code>'"),
        Column("date", "strftime(committed_at, '%Y-%m-%d')"),
        Column("subject", "subject"),
        Column(
            "touches kernel", "case when touches_kernel then 'yes' else 'no' end", css="'touches-' || touches_kernel"
        ),
    )


@dataclass(frozen=True)
class Trend:
    group: dict
    marks: list[dict]
    plot: Plot


@dataclass(frozen=True)
class CommitSection:
    trends: list[Trend]
    groups: int  # flagged commit sweeps without their GPU (the plots that could be drawn)
    suspects_html: str
    suspects_md: str
    suspects_shown: int
    suspects_total: int


def _records(con, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _plot_stem(group: dict) -> str:
    safe = "".join(
        c if c.isalnum() else "_"
        for c in f"{group['kernel_name']}_{group['kernel_operation_mode']}_{group['metric_name']}"
    )
    return f"commit_{safe}"


def _without_rank(row: dict) -> dict:
    # trend_rank only orders the report: the same trend moved down a place is the same plot
    return {k: v for k, v in row.items() if k != "trend_rank"}


def _by_rank(rows: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in rows:
        out.setdefault(row["trend_rank"], []).append(row)
    return out


def _trends(con, max_plots: int, batch: PlotBatch) -> list[Trend]:
    groups = _records(con, "select * from report_commit_groups where trend_rank <= ? order by trend_rank", [max_plots])
    if not groups:
        return []
    lines_of, marks_of = (
        _by_rank(_records(con, _LINES_SQL, [max_plots])),
        _by_rank(_records(con, _MARKS_SQL, [max_plots])),
    )
    ticks = _records(con, _TICKS_SQL)
    out = []
    for g in groups:
        lines, marks = lines_of.get(g["trend_rank"], []), marks_of.get(g["trend_rank"], [])
        # every benchmarked commit in the plotted span gets a tick, so a snapshot the sweep skipped shows
        ends = [m[k] for m in marks for k in ("from_commit_order", "to_commit_order")]
        shown = [r["step_rank"] for r in lines] + ends
        span = [t for t in ticks if shown and min(shown) <= t["commit_order"] <= max(shown)]
        content = [_without_rank(g), [_without_rank(r) for r in lines], span, [_without_rank(m) for m in marks]]
        out.append(Trend(g, marks, batch.add(_plot_stem(g), content, plot_commit_trend, lines, g, span, marks)))
    return out


def read_commit_section(con, max_plots: int, batch: PlotBatch) -> CommitSection:
    """Everything the lead shows; needs the report's macros (tables.install_macros) installed. The
    trend plots are added to ``batch``: their PNGs are there once the batch is drawn."""
    con.execute(_GROUPS_VIEW)
    (groups,) = con.execute("select count(*) from report_commit_groups").fetchone()
    suspects = render_table(
        con,
        _SUSPECTS_SOURCE,
        _suspect_columns(max_plots),
        "trend_rank nulls last, to_commit_order desc, kernel_name, kernel_provider, gpu_name, "
        'touches_kernel desc, committed_at desc, "commit"',
        limit=SUSPECT_ROWS_SHOWN,
        table_id="suspect-commits",
    )
    return CommitSection(_trends(con, max_plots, batch), groups, *suspects)


def _mark_text(m: dict) -> str:
    ends = [
        f"{m[f'{side}_short_commit']}" + (f" ({release_label(m[f'{side}_release'])})" if m[f"{side}_release"] else "")
        for side in ("from", "to")
    ]
    normalized = f", normalized ×{m['normalized_ratio']:.3f}" if m["normalized_ratio"] is not None else ""
    return f"{m['verdict']} on {m['gpu_name']}: {ends[0]}..{ends[1]} ×{m['ratio']:.3f}{normalized}"


def _title(t: Trend) -> str:
    g = t.group
    return (
        f"#{g['trend_rank']} {g['kernel_name']} / {g['kernel_provider']} / {g['kernel_operation_mode']} / "
        f"{g['metric_name']} / {g['x_name']} ({g['flagged_pairs']} flagged pair(s))"
    )


def _intro(section: CommitSection, max_plots: int) -> str:
    return (
        f"{len(section.trends)} of {section.groups:,} flagged commit sweeps plotted (max_plots = {max_plots}; "
        "worst verdict first, then the newest flagged commit). Each line is one provider on one GPU at every "
        "benchmarked commit: the geomean p50 over the sweep's x points (an x point missing at a commit "
        "does not move the line); liger solid, reference providers dashed in the same colour; flagged "
        "pairs shaded in their verdict's colour."
    )


def _suspects_note(section: CommitSection) -> str:
    note = (
        "Every commit in from..to (after from, up to and including to) of each commit regression "
        "(commit_suspects); 'touches kernel' says whether the commit changed that kernel's source under "
        "src/liger_kernel/ (an over-inclusive rule: a suspect, not a culprit)."
    )
    if section.suspects_shown < section.suspects_total:
        note += f" Showing {section.suspects_shown:,} of {section.suspects_total:,}; query `commit_suspects` for all."
    return note


def commit_section_html(section: CommitSection, max_plots: int) -> list[str]:
    parts = [
        "<h2 id='commit-trends'>Per-commit trend of flagged sweeps</h2>",
        f"<p>{html.escape(_intro(section, max_plots))}</p>",
    ]
    if not section.trends:
        parts.append("<p><em>none: no commit sweep is flagged (or no gh-pages snapshot was read)</em></p>")
    for t in section.trends:
        title = _title(t)
        marks = "".join(f"<li>{html.escape(_mark_text(m))}</li>" for m in t.marks)
        b64 = base64.b64encode(t.plot.png).decode()
        parts.append(
            f"<figure id='trend-{t.group['trend_rank']}'><h3>{html.escape(title)}</h3><ul>{marks}</ul>"
            f"<p><code>{html.escape(str(t.group['extra_config']))}</code></p>"
            f"<img alt='{html.escape(title)}' src='data:image/png;base64,{b64}'></figure>"
        )
    parts += [
        "<h2 id='suspects'>Suspect commits of the commit regressions</h2>",
        f"<p>{html.escape(_suspects_note(section))}</p>",
        section.suspects_html,
    ]
    return parts


def commit_section_markdown(section: CommitSection, max_plots: int) -> list[str]:
    md = ["## Per-commit trend of flagged sweeps\n", _intro(section, max_plots) + "\n"]
    if not section.trends:
        md.append("_none: no commit sweep is flagged (or no gh-pages snapshot was read)_\n")
    for t in section.trends:
        title = md_text(_title(t))
        marks = "".join(f"* {md_text(_mark_text(m))}\n" for m in t.marks)
        md.append(
            f"\n### {title}\n\n{marks}\n`extra_config`: {md_code(t.group['extra_config'])}\n\n"
            f"![{title}](plots/{t.plot.name})\n"
        )
    md += ["\n## Suspect commits of the commit regressions\n", _suspects_note(section) + "\n", section.suspects_md]
    return md
