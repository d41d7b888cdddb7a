/* MODEL
name: sweep_points
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, x_value, axis_key]
partitions_from: measurement_steps
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
    min(p20) as p20,
    median(p50) as p50,
    list_sort(list(p50)) as p50_runs,
    max(p80) as p80,
    count(*) as runs
from measurement_steps
group by
    kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config,
    x_value, axis_key
