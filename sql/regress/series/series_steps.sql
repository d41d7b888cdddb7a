/* MODEL
name: series_steps
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config, axis, step_rank]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, step_rank]
when_matched:
  metric_unit: max
  x_label: max
  x_numeric: max
  step_label: max
  liger_version: max
  version_rank: max
  benchmarked_commit: max
  release: max
  alias_provider: max
  observed_at: max
  first_observed_at: min
  runs: sum
  p50_min: min
  p50_max: max
  p20: min
  p80: max
  p50_runs: list_sort(flatten(list(p50_runs)))
  p50: list_median(flatten(list(p50_runs)))
  spread_log: ln(max(p50_max) / min(p50_min))
  step_commit_list: list_sort(list_distinct(flatten(list(step_commit_list))))
  step_commits: len(list_distinct(flatten(list(step_commit_list))))
depends_on: [ranked_measurements]
*/
-- series_steps: one row per axis, series and step (a version, or a benchmarked commit),
-- summarizing EVERY run of it.
--
-- Series key, axes and the Liger-family rule: see ranked_measurements.
-- Over the runs of one series at one step:
--   runs          how many runs (1 for most series; 2 for a commit benchmarked twice)
--   p50           the median of the runs' p50
--   p50_min/max   the lowest and highest p50 of a run
--   spread_log    ln(p50_max / p50_min): how far the runs of this step
--                 disagree (0 for a single run); a unit of re-run noise
--   p20, p80      the envelope band: the lowest p20 and the highest p80 of any
--                 run, so a band separation holds for every run, not just one
--   step_commits  distinct benchmarked commits among the runs (a version's runs
--                 may be different commits: then they are not re-runs)
--   alias_provider the provider name as measured when a rename was applied
--   observed_at   the latest run; first_observed_at the earliest.
--   p50_runs      every run's p50, in order, and step_commit_list the distinct benchmarked
--                 commits: a new snapshot's runs are merged into a kept step (its median taken
--                 again over both) without reading the step's earlier runs (when_matched).
-- Two spellings of one release (0.5.10, 0.5.10.0) share a rank and are one
-- version here (liger_version shows the greater text).
-- Built from spillable operators only: a median or a list aggregated over every step held each
-- group's values outside DuckDB's buffer pool and ran out of memory on a deep history (hundreds
-- of runs a series). A step of one run is its one p50 and commit; the steps of more runs (few) take
-- the middle run of a window's order (the mean of the two middle runs when their number is even, as
-- median() gives) and their run lists from their own runs alone. A window over every run of every
-- step sorted all the rows by the series key and spilled (6 GB written at 1,000 runs a series).
with steps as (
    select
        axis,
        kernel_name,
        kernel_provider,
        is_liger,
        kernel_operation_mode,
        metric_name,
        max(metric_unit) as metric_unit,
        gpu_name,
        x_name,
        max(x_label) as x_label,
        x_value,
        max(x_numeric) as x_numeric,
        extra_config,
        step_rank,
        max(step_label) as step_label,
        max(liger_version) as liger_version,
        max(version_rank) as version_rank,
        max(benchmarked_commit) as benchmarked_commit,
        max(release) as release,
        max(case when measured_provider <> kernel_provider then measured_provider end) as alias_provider,
        max(observed_at) as observed_at,
        min(observed_at) as first_observed_at,
        count(*) as runs,
        -- doubles whatever the input's numeric type
        cast(avg(p50) as double) as p50_mean,
        cast(min(p50) as double) as p50_min,
        cast(max(p50) as double) as p50_max,
        ln(max(p50) / min(p50)) as spread_log,
        cast(min(p20) as double) as p20,
        cast(max(p80) as double) as p80
    from ranked_measurements
    group by
        axis, kernel_name, kernel_provider, is_liger, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, step_rank
),

repeated as (
    select
        ranked_measurements.*,
        steps.runs,
        row_number() over series_step_by_p50 as run_order
    from ranked_measurements
    inner join steps
        on steps.axis = ranked_measurements.axis
        and steps.kernel_name = ranked_measurements.kernel_name
        and steps.kernel_provider = ranked_measurements.kernel_provider
        and steps.kernel_operation_mode = ranked_measurements.kernel_operation_mode
        and steps.metric_name = ranked_measurements.metric_name
        and steps.gpu_name = ranked_measurements.gpu_name
        and steps.x_name is not distinct from ranked_measurements.x_name
        and steps.x_value is not distinct from ranked_measurements.x_value
        and steps.extra_config is not distinct from ranked_measurements.extra_config
        and steps.step_rank = ranked_measurements.step_rank
    where steps.runs > 1
    window series_step_by_p50 as (
        partition by
            ranked_measurements.axis, ranked_measurements.kernel_name, ranked_measurements.kernel_provider,
            ranked_measurements.kernel_operation_mode, ranked_measurements.metric_name,
            ranked_measurements.gpu_name, ranked_measurements.x_name, ranked_measurements.x_value,
            ranked_measurements.extra_config, ranked_measurements.step_rank
        order by ranked_measurements.p50
    )
),

run_lists as (
    select
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, step_rank,
        cast(avg(p50) filter (where run_order between (runs + 1) // 2 and (runs + 2) // 2) as double) as p50,
        list_sort(list(p50)) as p50_runs,
        list_sort(list_distinct(list(benchmarked_commit))) as step_commit_list
    from repeated
    group by
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, step_rank
),

listed as (
    select
        steps.*,
        case when steps.runs = 1 then steps.p50_mean else run_lists.p50 end as p50,
        case when steps.runs = 1 then [steps.p50_mean] else run_lists.p50_runs end as p50_runs,
        case
            when steps.runs > 1 then run_lists.step_commit_list
            when steps.benchmarked_commit is null then cast([] as varchar[])
            else [steps.benchmarked_commit]
        end as step_commit_list
    from steps
    left join run_lists
        on run_lists.axis = steps.axis
        and run_lists.kernel_name = steps.kernel_name
        and run_lists.kernel_provider = steps.kernel_provider
        and run_lists.kernel_operation_mode = steps.kernel_operation_mode
        and run_lists.metric_name = steps.metric_name
        and run_lists.gpu_name = steps.gpu_name
        and run_lists.x_name is not distinct from steps.x_name
        and run_lists.x_value is not distinct from steps.x_value
        and run_lists.extra_config is not distinct from steps.extra_config
        and run_lists.step_rank = steps.step_rank
)

select
    axis,
    kernel_name,
    kernel_provider,
    is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    step_rank,
    step_label,
    liger_version,
    version_rank,
    benchmarked_commit,
    release,
    -- count(distinct) would cost a second aggregation and a join; the list is made anyway
    len(step_commit_list) as step_commits,
    step_commit_list,
    alias_provider,
    observed_at,
    first_observed_at,
    runs,
    p50,
    p50_runs,
    p50_min,
    p50_max,
    spread_log,
    p20,
    p80
from listed
