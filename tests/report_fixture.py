"""A small synthetic warehouse for the report, summary and browser tests (import explicitly).

``build_report_warehouse(path, flaky=True)`` writes a DuckDB file whose
``measurements`` are made up here, then runs the project's real regression
layer over them (tests/regression_support.py). Designed content:

* versions 0.1.0, 0.2.0, 0.3.0 (newest); GPU ``GPU A``; liger beside torch;
* ``k00`` .. ``k34``: liger 2x slower from 0.1.0 to 0.2.0, torch unchanged ->
  35 regressions, more than the default plot budget of 30;
* ``k35`` .. ``k39``: unchanged; ``launchy``: a liger kernel flat across x
  (launch-bound) that doubles at 0.2.0 while torch scales with x;
* at 0.3.0: ``k00`` .. ``k04`` measured only on ``GPU B`` and a kernel
  ``brand_new`` -- nothing to compare them with; with ``flaky=True`` also
  ``flaky`` on ``GPU A``, two 0.3.0 runs that disagree 2x -> ``unstable``.

The coverage view and the per-side run counts come from the regression layer
when it provides them; where it does not yet, this module adds stand-ins with
the same columns (``version_coverage``; ``from_runs``/``to_runs``, ``unstable``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.regression_support import build_regression_layer

SWEEP_KEYS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "gpu_name",
    "x_name",
    "extra_config",
)
REGRESSED = [f"k{i:02d}" for i in range(35)]

_MEASUREMENTS_SQL = """
create or replace table measurements as
with plan(kernel_name, gpu_name, liger_version, run, liger_factor, flat) as (
    select * from (values
        {rows}
    )
),
x as (select unnest([256, 512, 1024, 2048, 4096, 8192]) as x),
providers as (select unnest(['liger', 'torch']) as kernel_provider),
expanded as (
    select plan.*, providers.kernel_provider, x.x,
        case
            when kernel_provider = 'torch' then 0.001 * x
            when flat then 0.02 * liger_factor
            else 0.0008 * x * liger_factor
        end as p50
    from plan cross join providers cross join x
)
select
    sha256(concat_ws('|', kernel_name, kernel_provider, gpu_name, liger_version, run, x)) as measurement_digest,
    kernel_name, kernel_provider, 'forward' as kernel_operation_mode, 'speed' as metric_name,
    'ms' as metric_unit, gpu_name, 'N' as x_name, 'N' as x_label, cast(x as varchar) as x_value,
    '{{}}' as extra_config, liger_version,
    timestamp '2026-01-01' + to_days(cast(100 * liger_version_index + 10 * run as integer)) as observed_at,
    0.97 * p50 as p20, p50, 1.03 * p50 as p80, 1::bigint as source_count,
    'csv' as origin
from (
    select *, case liger_version when '0.1.0' then 1 when '0.2.0' then 2 else 3 end as liger_version_index
    from expanded
)
"""


def _plan_rows(flaky: bool) -> list[str]:
    rows = []
    for k in [*REGRESSED, *(f"k{i:02d}" for i in range(35, 40)), "launchy"]:
        regressed = k in REGRESSED or k == "launchy"
        flat = "true" if k == "launchy" else "false"
        rows.append(f"('{k}', 'GPU A', '0.1.0', 0, 1.0, {flat})")
        rows.append(f"('{k}', 'GPU A', '0.2.0', 0, {2.0 if regressed else 1.0}, {flat})")
        if not regressed:
            # a re-run 1 % off: the noise floor then has groups of ordinary noise
            rows.append(f"('{k}', 'GPU A', '0.1.0', 1, 1.01, {flat})")
    for k in [*REGRESSED[:5], "brand_new"]:
        rows.append(f"('{k}', 'GPU B', '0.3.0', 0, 1.0, false)")
    if flaky:
        rows += [
            "('flaky', 'GPU A', '0.2.0', 0, 1.0, false)",
            "('flaky', 'GPU A', '0.3.0', 0, 1.0, false)",
            "('flaky', 'GPU A', '0.3.0', 1, 2.0, false)",
        ]
    return rows


_COVERAGE_STANDIN_SQL = f"""
create table version_coverage as
with sweeps as (
    select distinct {", ".join(SWEEP_KEYS)}, liger_version, version_rank
    from series_versions where is_liger
),
pairs as (
    select {", ".join(SWEEP_KEYS)}, to_version as liger_version, from_version, verdict
    from sweep_regressions
)
select
    sweeps.*, pairs.from_version as compared_with, pairs.verdict,
    case
        when pairs.from_version is not null then null
        when exists (
            select 1 from sweeps as earlier
            where earlier.kernel_name = sweeps.kernel_name
              and earlier.kernel_provider = sweeps.kernel_provider
              and earlier.version_rank < sweeps.version_rank
        ) then 'earlier versions only on another GPU, config or provider'
        else 'first seen'
    end as reason
from sweeps left join pairs using ({", ".join(SWEEP_KEYS)}, liger_version)
"""

_RUNS_SQL = """
with runs as (
    select {keys}, version_rank, max(runs_at_version) as runs
    from series_versions group by all
)
select target.* replace (
    {verdict} as verdict
), from_runs.runs as from_runs, to_runs.runs as to_runs
from {view} as target
left join runs as from_runs
    on {from_join} and from_runs.version_rank = target.from_version_rank
left join runs as to_runs
    on {to_join} and to_runs.version_rank = target.to_version_rank
"""


def _columns(con, name: str) -> set[str]:
    return {r[0] for r in con.execute(f"describe {name}").fetchall()}


def _add_runs_standin(con, view: str) -> None:
    """``view`` as a table with run counts per side, and ``unstable`` where the new side disagrees."""
    keys = [k for k in SWEEP_KEYS if k in _columns(con, view)]
    join = lambda alias: " and ".join(f"{alias}.{k} is not distinct from target.{k}" for k in keys)  # noqa: E731
    # stand-in for the coming rule: 'flaky' is the only fixture sweep whose new runs disagree
    verdict = "case when target.kernel_name = 'flaky' then 'unstable' else target.verdict end"
    sql = _RUNS_SQL.format(
        keys=", ".join(keys), view=view, verdict=verdict, from_join=join("from_runs"), to_join=join("to_runs")
    )
    con.execute(f"create table {view}_with_runs as {sql}")
    con.execute(f"drop view {view}")
    con.execute(f"alter table {view}_with_runs rename to {view}")


def _extras(con) -> None:
    """Tables the closing summary reads beside the regression layer."""
    con.execute("""create or replace table source as
        select * from (values ('liger_csv/a.csv', 'liger_csv', 120), ('kernelindex/b.json', 'kernelindex', 3))
        as t(source_path, kind, rows_read)""")
    con.execute("""create or replace table quarantine as
        select * from (values ('liger_csv/a.csv', 'line 7', 'short_row', 'x,y'))
            as t(source_file, location, reason, raw)""")


def build_report_warehouse(path: Path, flaky: bool = True) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute(_MEASUREMENTS_SQL.format(rows=",\n        ".join(_plan_rows(flaky))))
        build_regression_layer(con)
        views = {r[0] for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()}
        tables = {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}
        for name in ("sweep_regressions", "regressions"):
            if not {"from_runs", "to_runs"} <= _columns(con, name):
                _add_runs_standin(con, name)
        if "version_coverage" not in views | tables:
            con.execute(_COVERAGE_STANDIN_SQL)
        _extras(con)
    return path
