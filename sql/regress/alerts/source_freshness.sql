/* MODEL
name: source_freshness
kind: VIEW
grain: [family, scope]
depends_on: [benchmark_snapshot, freshness_settings, measurements, source]
*/
-- source_freshness: one row per source family and scope, and whether it went silent (issue 54).
-- Families (each run once, at its run time):
--   gh-pages CI           upstream's CI runs (benchmark_snapshot, origin gh_pages), per GPU (scope):
--                         a run is a snapshot, at the earliest time it measured that GPU
--   committed CSV         upstream's committed CSV snapshots (source kind liger_csv that are not
--                         gh-pages snapshots), at their commit time; scope ''
--   commit runs           our own runs at commits (benchmark_snapshot, origin not gh_pages); scope ''
--   KernelIndex records   facts a KernelIndex record carries, one run per distinct time; scope ''
--   runs               distinct run times
--   newest_run_at      the newest run
--   usual_interval_hours  the median gap between consecutive runs (its own history; NULL under
--                      3 runs: two gaps at least, so one odd gap does not set it)
--   judged_at          freshness_settings.judged_at (LIGER_FRESHNESS_NOW), else the clock when read
--   silent_hours       judged_at - newest_run_at
--   overdue            silent_hours > overdue_factor (LIGER_FRESHNESS_FACTOR, 3) x usual interval
--   overdue_at         newest_run_at + overdue_factor x usual interval: when it became overdue
with runs as (
    select 'gh-pages CI' as family, m.gpu_name as scope, m.snapshot as run, min(m.observed_at) as run_at
    from measurements as m
    inner join benchmark_snapshot as s on s.snapshot = m.snapshot
    where s.origin = 'gh_pages'
    group by m.gpu_name, m.snapshot

    union all

    select 'committed CSV' as family, '' as scope, source_path as run, committed_at as run_at
    from source
    where kind = 'liger_csv' and snapshot is null and committed_at is not null

    union all

    select 'commit runs' as family, '' as scope, snapshot as run, run_started_at as run_at
    from benchmark_snapshot
    where origin <> 'gh_pages' and run_started_at is not null

    union all

    select distinct
        'KernelIndex records' as family, '' as scope, cast(observed_at as varchar) as run, observed_at as run_at
    from measurements
    where origin like '%kernelindex%'
),

times as (
    select distinct family, scope, run_at from runs
),

gaps as (
    select
        family,
        scope,
        run_at,
        (epoch(run_at) - epoch(lag(run_at) over (partition by family, scope order by run_at))) / 3600.0
            as gap_hours
    from times
),

per_source as (
    select
        family,
        scope,
        count(*) as runs,
        max(run_at) as newest_run_at,
        case when count(gap_hours) >= 2 then median(gap_hours) end as usual_interval_hours
    from gaps
    group by family, scope
),

judged as (
    select
        per_source.*,
        coalesce(freshness_settings.judged_at, timezone('UTC', current_timestamp)) as judged_at,
        freshness_settings.overdue_factor
    from per_source
    cross join freshness_settings
)

select
    family,
    scope,
    runs,
    newest_run_at,
    usual_interval_hours,
    judged_at,
    (epoch(judged_at) - epoch(newest_run_at)) / 3600.0 as silent_hours,
    overdue_factor,
    coalesce(
        (epoch(judged_at) - epoch(newest_run_at)) / 3600.0 > overdue_factor * usual_interval_hours, false
    ) as overdue,
    make_timestamp(cast((epoch(newest_run_at) + overdue_factor * usual_interval_hours * 3600) * 1000000 as bigint))
        as overdue_at
from judged
