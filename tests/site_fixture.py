"""A tiny hand-made DuckDB file with just the relations the dashboard reads (import explicitly).

``build_site_db(path, commits=False, suspects=False)``:

* versions 0.1.0, 0.2.0, 0.10.0 (PEP 440 order; text order would put 0.10.0 first);
* kernel ``HOSTILE_KERNEL`` (``<``, ``$``, quotes, ``&``) and ``plain``, each measured by
  ``liger`` and ``torch`` on ``GPU A`` at x = 256 and 1024 (x_value text sorts 1024 first);
* ``liger`` ``HOSTILE_KERNEL`` regresses 0.2.0 -> 0.10.0 (``sweep_regressions`` holds that pair
  and an unchanged 0.1.0 -> 0.2.0); ``plain`` at 0.2.0 has two runs;
* ``commits=True`` adds ``commit``, ``commit_order`` and ``release`` to ``measurements`` (two
  commits of 0.10.0, the rest without a commit); ``suspects=True`` adds a ``commit_suspects`` view.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

HOSTILE_KERNEL = "k<script>alert(1)</script>$x$ \"q\" 'a'&amp;"
HOSTILE_REASON = "x1.235 <b>beyond</b> noise & \"quoted\""
VERSIONS = ("0.1.0", "0.2.0", "0.10.0")

_MEASUREMENTS = """
create table measurements as
with plan(kernel_name, kernel_provider, liger_version, version_rank, run, factor, commit_sha, commit_order) as (
    values
        ($kernel, 'liger', '0.1.0', 1, 1, 1.0, null, null),
        ($kernel, 'liger', '0.2.0', 2, 1, 1.0, null, null),
        ($kernel, 'liger', '0.10.0', 3, 1, 1.5, 'aaaaaaaaaaaa1', 10),
        ($kernel, 'liger', '0.10.0', 3, 2, 1.6, 'bbbbbbbbbbbb2', 11),
        ($kernel, 'torch', '0.1.0', 1, 1, 2.0, null, null),
        ($kernel, 'torch', '0.2.0', 2, 1, 2.0, null, null),
        ($kernel, 'torch', '0.10.0', 3, 1, 2.0, 'aaaaaaaaaaaa1', 10),
        ('plain', 'liger', '0.1.0', 1, 1, 1.0, null, null),
        ('plain', 'liger', '0.2.0', 2, 1, 1.0, null, null),
        ('plain', 'liger', '0.2.0', 2, 2, 1.1, null, null),
        ('plain', 'torch', '0.2.0', 2, 1, 3.0, null, null)
),
x as (select unnest(['256', '1024']) as x_value)
select
    kernel_name, kernel_provider, 'forward' as kernel_operation_mode, 'speed' as metric_name,
    'ms' as metric_unit, 'GPU A' as gpu_name, 'N' as x_name, 'N' as x_label, x_value,
    cast(x_value as double) as x_numeric, '{"dtype": "<bf16>"}' as extra_config, liger_version, version_rank,
    timestamp '2026-01-01' + to_days(10 * version_rank + run) as observed_at,
    0.9 * factor * 0.0012345678 * cast(x_value as double) as p20,
    factor * 0.0012345678 * cast(x_value as double) as p50,
    1.1 * factor * 0.0012345678 * cast(x_value as double) as p80,
    commit_sha, commit_order
from plan cross join x
"""

_SERIES_VERSIONS = """
create table series_versions as
select
    kernel_name, kernel_provider, starts_with(kernel_provider, 'liger') as is_liger, kernel_operation_mode,
    metric_name, max(metric_unit) as metric_unit, gpu_name, x_name, max(x_label) as x_label, x_value,
    max(x_numeric) as x_numeric, extra_config, max(liger_version) as liger_version, version_rank,
    count(*) as runs, median(p50) as p50, min(p20) as p20, max(p80) as p80
from measurements
group by all
"""

_SWEEP_REGRESSIONS = """
create table sweep_regressions as
select * from (values
    ($kernel, 'liger', 'forward', 'speed', 'ms', 'GPU A', 'N', '{"dtype": "<bf16>"}', '0.2.0', '0.10.0', 2, 3,
     true, 1, 2, 2::bigint, 2::bigint, 'torch', 1.23456789, 1.0, 1.23456789, 0.0689, 1.0, 'regression',
     $reason),
    ($kernel, 'liger', 'forward', 'speed', 'ms', 'GPU A', 'N', '{"dtype": "<bf16>"}', '0.1.0', '0.2.0', 1, 2,
     false, 1, 1, 2::bigint, 2::bigint, 'torch', 1.0, 1.0, 1.0, 0.0689, 0.0, 'unchanged', 'x1.000 within noise')
) as t(kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit, gpu_name, x_name,
       extra_config, from_version, to_version, from_version_rank, to_version_rank, is_newest, from_runs, to_runs,
       shared_points, reference_points, reference_providers, geomean_ratio, geomean_reference_ratio,
       geomean_normalized_ratio, threshold, band_fraction, verdict, reason)
"""

_VERSION_COVERAGE = """
create table version_coverage as
select kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config,
       liger_version, version_rank,
       case when kernel_name = $kernel and version_rank > 1 then
           case version_rank when 2 then '0.1.0' else '0.2.0' end end as compared_with,
       case when kernel_name = $kernel and version_rank > 1 then
           case version_rank when 2 then 'unchanged' else 'regression' end end as verdict,
       case when kernel_name = $kernel and version_rank > 1 then 'see sweep_regressions'
            when version_rank = 1 then 'first version of the series'
            else 'too few shared x points' end as reason,
       cast(null as integer) as from_runs, cast(max(runs) as integer) as to_runs
from series_versions where is_liger
group by all
"""


def build_site_db(path: Path, *, commits: bool = False, suspects: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    params = {"kernel": HOSTILE_KERNEL}
    with duckdb.connect(str(path)) as con:
        con.execute(_MEASUREMENTS, params)
        if commits:
            con.execute('alter table measurements rename column commit_sha to "commit"')
            con.execute("alter table measurements add column release varchar")
            con.execute("""update measurements set release = 'v' || liger_version where "commit" is not null""")
        else:
            con.execute("alter table measurements drop column commit_sha")
            con.execute("alter table measurements drop column commit_order")
        con.execute(_SERIES_VERSIONS)
        con.execute(_SWEEP_REGRESSIONS, {"kernel": HOSTILE_KERNEL, "reason": HOSTILE_REASON})
        con.execute(_VERSION_COVERAGE, params)
        con.execute("create table liger_version_order as select * from (values ('0.1.0', 1), ('0.2.0', 2), "
                    "('0.10.0', 3), ('not-a-version', null)) as t(liger_version, version_rank)")
        con.execute("create table liger_versions as select liger_version, version_rank, "
                    "version_rank = 3 as is_newest from liger_version_order")
        if suspects:
            con.execute("""
                create table suspect_rows as
                select $kernel as kernel_name, 'liger' as kernel_provider, 'forward' as kernel_operation_mode,
                       'speed' as metric_name, 'GPU A' as gpu_name, 'bbbbbbbbbbbb2' as "commit",
                       0.87654321 as score, 'touched <rms_norm.py>' as why""", params)
            con.execute("create view commit_suspects as select * from suspect_rows")
    return path
