/* MODEL
name: sweep_points
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, x_value, axis_key]
partitions_from: measurement_steps
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis_key]
when_matched:
  metric_unit: max
  x_numeric: max
  benchmarked_commit: max
  commit_order: max
  release: max
  version_rank: max
  p20: min
  p80: max
  runs: sum
  p50_runs: list_sort(flatten(list(p50_runs)))
  p50: list_median(flatten(list(p50_runs)))
depends_on: [measurement_steps]
*/
-- sweep_points: what the dashboard plots, one row per sweep (kernel, provider as measured, pass,
-- metric, GPU, x name, config), x point and step of measurement_steps: the p20-p80 envelope of
-- its runs (lowest p20, highest p80), the median of their p50 (p50_runs: every run's, in order),
-- how many runs. Kept as a table, a new snapshot's runs merged into the kept steps (the median taken
-- again over p50_runs), so the dashboard reads aggregates, not every fact.
-- Spillable operators only (see series_steps): the median is the middle run of a window's order,
-- the run list is aggregated over the steps of more than one run alone.
with runs as (
    select
        measurement_steps.*,
        count(*) over point_step as runs,
        row_number() over point_step_by_p50 as run_order
    from measurement_steps
    window point_step as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
            extra_config, x_value, axis_key
    ),
    point_step_by_p50 as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
            extra_config, x_value, axis_key
        order by p50
    )
),

run_lists as (
    select
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, x_value, axis_key,
        list_sort(list(p50)) as p50_runs
    from runs
    where runs > 1
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, x_value, axis_key
),

points as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        x_value,
        axis_key,
        max(metric_unit) as metric_unit,
        max(x_numeric) as x_numeric,
        max(benchmarked_commit) as benchmarked_commit,
        max(commit_order) as commit_order,
        max(release) as release,
        max(version_rank) as version_rank,
        -- doubles whatever the input's numeric type (the middle runs' average is one)
        cast(min(p20) as double) as p20,
        cast(avg(p50) filter (where run_order between (runs + 1) // 2 and (runs + 2) // 2) as double) as p50,
        cast(max(p80) as double) as p80,
        count(*) as runs
    from runs
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, x_value, axis_key
)

select
    points.kernel_name,
    points.kernel_provider,
    points.kernel_operation_mode,
    points.metric_name,
    points.gpu_name,
    points.x_name,
    points.extra_config,
    points.x_value,
    points.axis_key,
    points.metric_unit,
    points.x_numeric,
    points.benchmarked_commit,
    points.commit_order,
    points.release,
    points.version_rank,
    points.p20,
    points.p50,
    case when points.runs = 1 then [points.p50] else run_lists.p50_runs end as p50_runs,
    points.p80,
    points.runs
from points
left join run_lists
    on run_lists.kernel_name = points.kernel_name
    and run_lists.kernel_provider = points.kernel_provider
    and run_lists.kernel_operation_mode = points.kernel_operation_mode
    and run_lists.metric_name = points.metric_name
    and run_lists.gpu_name = points.gpu_name
    and run_lists.x_name is not distinct from points.x_name
    and run_lists.extra_config is not distinct from points.extra_config
    and run_lists.x_value is not distinct from points.x_value
    and run_lists.axis_key = points.axis_key
