"""The launch-bound hint: the one rule, its constants, and the SQL that applies it.

A speed sweep is *launch-bound?* when, at the version it was judged at, its liger p50

* is short: the median over its x points is below ``LAUNCH_MAX_MEDIAN_MS`` (a kernel launch and
  the Python around it cost tens of µs; a sweep of ~0.1 ms is mostly that), and
* is flat across x: max / min of p50 over the x points is at most ``LAUNCH_MAX_SPREAD`` (work that
  grows with x would show), over at least ``LAUNCH_MIN_POINTS`` points.

Such sweeps move between runs far more than long kernels do, so a verdict on them deserves a
second run before anyone acts on it. The rule is the SQL macro ``is_launch_bound`` (installed by
``install_launch_macro``); docs/regressions.md, section "Launch-bound", explains it.
"""

from __future__ import annotations

__all__ = [
    "LAUNCH_MAX_MEDIAN_MS",
    "LAUNCH_MAX_SPREAD",
    "LAUNCH_MIN_POINTS",
    "install_launch_macro",
    "launch_hints_sql",
]

# median p50 over the sweep's x points, in ms, below which launch overhead dominates
LAUNCH_MAX_MEDIAN_MS = 0.5
# max / min of p50 across x at most this: flat (a kernel whose work shows scales further)
LAUNCH_MAX_SPREAD = 3.5
# fewer x points say nothing about flatness
LAUNCH_MIN_POINTS = 3

_MACRO = f"""
create or replace temp macro is_launch_bound(metric_name, metric_unit, median_p50, spread, points) as
    coalesce(
        metric_name = 'speed' and metric_unit = 'ms'
        and points >= {LAUNCH_MIN_POINTS}
        and median_p50 < {LAUNCH_MAX_MEDIAN_MS}
        and spread <= {LAUNCH_MAX_SPREAD},
        false)
"""


def install_launch_macro(con) -> None:
    con.execute(_MACRO)


def launch_hints_sql(flagged: str, same_sweep: str) -> str:
    """A query of (plot_rank, median_p50, spread, points, hint) for the launch-bound sweeps of the
    view ``flagged`` (sweep_regressions rows with a plot_rank): their liger p50 per x point at
    ``to_version``, from series_versions; ``same_sweep`` joins ``sv`` to ``f`` on the sweep key
    except the provider."""
    return f"""
with own as (
    select f.plot_rank, any_value(sv.metric_unit) as metric_unit, any_value(f.metric_name) as metric_name,
           count(*) as points, median(sv.p50) as median_p50, max(sv.p50) / min(sv.p50) as spread
    from {flagged} as f join series_versions as sv
        on {same_sweep} and sv.kernel_provider = f.kernel_provider
        and sv.version_rank = f.to_version_rank
    where f.metric_name = 'speed' and sv.p50 > 0
    group by f.plot_rank
)
select
    plot_rank, median_p50, spread, points,
    printf('launch-bound? median p50 %s, flat across x (×%.2f over %d points)',
           case when median_p50 < 1 then printf('%.0f µs', 1000 * median_p50) else printf('%.2f ms', median_p50) end,
           spread, points) as hint
from own
where is_launch_bound(metric_name, metric_unit, median_p50, spread, points)
"""
