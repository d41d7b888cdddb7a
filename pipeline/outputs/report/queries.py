"""Read-only questions the report, the closing summary and the Dagster check share.

Every query aggregates or LIMITs inside DuckDB: their cost follows the number of
versions and flagged sweeps, never a Python pass over the warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.regress.judge import SEVERITY, SEVERITY_SQL

__all__ = [
    "FLAGGED_VERDICTS",
    "SEVERITY_SQL",
    "NamedRegression",
    "VersionCoverage",
    "coverage_by_version",
    "named_regressions",
    "newest_overview",
    "newest_regressions",
]

# worst first: a plot budget is spent on these in this order
# Every verdict a kernel author should look at: a change beyond noise, called or not yet callable.
FLAGGED_VERDICTS = SEVERITY
_TOP_REASONS = 4

COVERAGE_SQL = """
with coverage as (
    select * from version_coverage
),
per_version as (
    select liger_version, max(version_rank) as version_rank, count(*) as series,
           count(compared_with) as compared
    from coverage group by liger_version
),
verdicts as (
    select liger_version, verdict, count(*) as n
    from coverage where compared_with is not null group by all
),
verdict_lists as (
    select liger_version, list(struct_pack(verdict := verdict, n := n) order by n desc, verdict) as verdicts
    from verdicts group by liger_version
),
reasons as (
    select liger_version, coalesce(reason, '(no reason given)') as reason, count(*) as n
    from coverage where compared_with is null group by all
),
reason_lists as (
    select liger_version, list(struct_pack(reason := reason, n := n) order by n desc, reason) as reasons
    from reasons group by liger_version
)
select
    per_version.liger_version,
    per_version.version_rank,
    per_version.series,
    per_version.compared,
    coalesce(verdict_lists.verdicts, []) as verdicts,
    coalesce(reason_lists.reasons, []) as reasons,
    per_version.version_rank = (select max(version_rank) from liger_version_order) as is_newest
from per_version
left join verdict_lists using (liger_version)
left join reason_lists using (liger_version)
order by per_version.version_rank desc nulls last, per_version.liger_version
"""


@dataclass
class VersionCoverage:
    """Liger-family series of one version: how many were compared, with what verdicts, and why not."""

    version: str | None
    series: int = 0
    compared: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)

    def sentence(self) -> str:
        """e.g. ``0.8.0: 412 series, 0 compared: 380 first seen, 32 no shared x points``."""
        text = f"{self.version}: {self.series:,} series, {self.compared:,} compared"
        if self.verdicts:
            text += " (" + ", ".join(f"{n:,} {v}" for v, n in self.verdicts.items()) + ")"
        if self.reasons:
            shown = list(self.reasons.items())[:_TOP_REASONS]
            text += "; not compared: " + ", ".join(f"{n:,} {r}" for r, n in shown)
            rest = sum(n for _, n in list(self.reasons.items())[_TOP_REASONS:])
            if rest:
                text += f", {rest:,} for {len(self.reasons) - _TOP_REASONS} other reasons"
        return text

    def regressions_line(self) -> str:
        """The newest-version headline; never reads 'none' when nothing was compared."""
        regressed = self.verdicts.get("regression", 0)
        if self.series == 0:
            return f"Regressions in {self.version}: unknown, no liger-family series was measured at this version."
        if self.compared == 0:
            return (
                f"Regressions in {self.version}: unknown, none of its {self.series:,} series was compared "
                "with an earlier version (see coverage)."
            )
        not_compared = self.series - self.compared
        tail = f"; {not_compared:,} of {self.series:,} series not compared" if not_compared else ""
        if regressed == 0:
            return f"Regressions in {self.version}: none among {self.compared:,} compared series{tail}."
        return f"Regressions in {self.version}: {regressed:,} of {self.compared:,} compared series{tail}."


def coverage_by_version(con) -> list[VersionCoverage]:
    """One entry per version, newest first (one row per version: bounded by the release count)."""
    return [_from_row(r) for r in con.execute(COVERAGE_SQL).fetchall()]


def _from_row(r) -> VersionCoverage:
    return VersionCoverage(
        version=r[0],
        series=r[2],
        compared=r[3],
        verdicts={v["verdict"]: v["n"] for v in r[4]},
        reasons={v["reason"]: v["n"] for v in r[5]},
    )


def newest_overview(con, coverage: list[VersionCoverage] | None = None) -> VersionCoverage:
    """Coverage of the newest measured Liger version (zero series if it has no liger-family row);
    taken from ``coverage`` (`coverage_by_version`) when the caller has it: the view is read once."""
    newest = con.execute("select liger_version from liger_versions where is_newest limit 1").fetchone()
    version = newest[0] if newest else None
    if coverage is not None:
        return next((c for c in coverage if c.version == version), VersionCoverage(version=version))
    rows = con.execute(
        f"select * from ({COVERAGE_SQL}) where liger_version is not distinct from ?", [version]
    ).fetchall()
    return _from_row(rows[0]) if rows else VersionCoverage(version=version)


# The newest version's regressed sweeps, the first of them (the report's summary; its Dagster checks show them)
_NEWEST_REGRESSIONS_SQL = """
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
       from_version, to_version, reason
from sweep_regressions
where is_newest and verdict = 'regression'
order by geomean_ratio desc
limit 20
"""


def newest_regressions(con) -> list[str]:
    """The newest version's worst regressed sweeps, one line each (at most 20)."""
    return [
        f"{kernel}/{provider}/{mode}/{metric}/{gpu} {before}->{after}: {reason}"
        for kernel, provider, mode, metric, gpu, before, after, reason in con.execute(
            _NEWEST_REGRESSIONS_SQL
        ).fetchall()
    ]


# Regressions named one line each: the sweeps of one kernel, provider, pass, metric and GPU that
# regressed across the same pair are one line (their x_name / extra_config differ), the worst ratio shown.
_COMMIT_NAMED_SQL = """
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
       any_value(from_short_commit) as from_label, any_value(to_short_commit) as to_label,
       any_value(from_release) as from_release, any_value(to_release) as to_release,
       max(ratio) as ratio, count(*) as sweeps, max(to_commit_order) as newest, count(*) over () as total
from commit_regressions
where verdict = 'regression'
group by kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, from_commit, to_commit
order by newest desc, ratio desc, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name
limit ?
"""
_VERSION_NAMED_SQL = """
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
       from_version as from_label, to_version as to_label, null as from_release, null as to_release,
       max(geomean_ratio) as ratio, count(*) as sweeps, max(to_version_rank) as newest, count(*) over () as total
from sweep_regressions
where verdict = 'regression'
group by kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, from_version, to_version
order by newest desc nulls last, ratio desc, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
    gpu_name
limit ?
"""


@dataclass(frozen=True)
class NamedRegression:
    """One regressed (kernel, provider, pass, metric, GPU) across one pair of commits or versions."""

    kernel: str
    provider: str
    mode: str
    metric: str
    gpu: str
    from_label: str
    to_label: str
    from_release: str | None
    to_release: str | None
    ratio: float
    sweeps: int

    def line(self) -> str:
        """e.g. ``rms_norm forward speed on NVIDIA H100: 7705dcc (v0.6.1)..2845fe8 ×1.200``."""
        provider = "" if self.provider == "liger" else f" [{self.provider}]"

        def end(label: str, release: str | None) -> str:
            return f"{label} (v{release.lstrip('vV')})" if release else label

        text = (
            f"{self.kernel}{provider} {self.mode} {self.metric} on {self.gpu}: "
            f"{end(self.from_label, self.from_release)}..{end(self.to_label, self.to_release)} ×{self.ratio:.3f}"
        )
        return text + (f" ({self.sweeps} sweeps, the worst shown)" if self.sweeps > 1 else "")


def named_regressions(con, axis: str, limit: int) -> tuple[list[NamedRegression], int]:
    """The newest ``limit`` regressions on ``axis`` ('commit' or 'version') and how many there are."""
    rows = con.execute(_COMMIT_NAMED_SQL if axis == "commit" else _VERSION_NAMED_SQL, [limit]).fetchall()
    total = rows[0][-1] if rows else 0
    return [NamedRegression(*r[:11]) for r in rows], total
