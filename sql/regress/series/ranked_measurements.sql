/* MODEL
name: ranked_measurements
kind: VIEW
grain: [measurement_digest, axis]
fact_columns: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config]
fact_steps:
  columns: [axis, step_rank]
  sql: >-
    select t.*, o.liger_version, null::varchar as snapshot
    from touched t join liger_version_order o on t.axis = 'version' and o.version_rank = t.step_rank
    union all
    select t.*, null, s.snapshot
    from touched t join benchmark_commit c on t.axis = 'commit' and c.commit_order = t.step_rank
    join benchmark_snapshot s on s.commit = c.commit
depends_on: [liger_version_order, measurements, provider_renames]
*/
-- ranked_measurements: every measurement that takes part in comparisons, once per axis it has a
-- place on, with its series key, its family and its run recency. The one place for:
--   * the series key: kernel_name, kernel_provider, kernel_operation_mode,
--     metric_name, gpu_name, x_name, x_value, extra_config (a sweep is a series
--     without x_value). kernel_provider is the provider as keyed: a reviewed rename
--     (provider_renames: liger_triton since 0.8.0 -> liger) is applied here, and
--     measured_provider keeps the name as measured;
--   * the two axes, one row per measurement and axis:
--       axis = 'version'  step_rank = version_rank (PEP 440); versions that are
--                         not PEP 440 (rank NULL) are left out;
--       axis = 'commit'   step_rank = commit_order (the benchmarked commit's place
--                         in commit order); measurements with no known commit are
--                         left out. A commit benchmarked twice is one step with two runs.
--     step_label names the step (the version, or the commit's short sha);
--   * p50s that are not positive are left out (no ratio can be formed);
--   * the Liger-family rule: is_liger = the provider name starts with 'liger'
--     (liger, liger_triton, liger_cutile, ...); the others (torch, huggingface,
--     ...) are references;
--   * runs: runs_at_step = how many runs measured this series at this step;
--     run_recency = 1 for the latest of them (observed_at, then digest).
-- Every run takes part in the verdicts; run_recency only names the latest.
with renames as (
    select
        provider_renames.from_provider,
        provider_renames.to_provider,
        liger_version_order.version_rank as since_rank
    from provider_renames
    left join liger_version_order
        on liger_version_order.liger_version = provider_renames.since_version
),

keyed as (
    select
        measurements.measurement_digest,
        measurements.kernel_name,
        coalesce(renames.from_provider, measurements.kernel_provider) as kernel_provider,
        measurements.kernel_provider as measured_provider,
        measurements.kernel_operation_mode,
        measurements.metric_name,
        measurements.metric_unit,
        measurements.gpu_name,
        measurements.x_name,
        measurements.x_label,
        measurements.x_value,
        measurements.x_numeric,
        measurements.extra_config,
        measurements.liger_version,
        measurements.version_rank,
        measurements.benchmarked_commit,
        measurements.release,
        measurements.commit_order,
        measurements.snapshot,
        measurements.observed_at,
        measurements.p20,
        measurements.p50,
        measurements.p80
    from measurements
    left join renames
        on renames.to_provider = measurements.kernel_provider
        and coalesce(measurements.version_rank >= renames.since_rank, true)
    where measurements.p50 > 0
),

-- Both axes from one pass over the facts: `keyed` read once per axis was kept whole in memory for the
-- second read (8 M wide rows spilled at 10 M facts: reference_measurements 39 -> 27 s).
stepped as (
    select
        axes.axis,
        case axes.axis when 'version' then keyed.version_rank else keyed.commit_order end as step_rank,
        case axes.axis
            when 'version' then keyed.liger_version
            else substr(keyed.benchmarked_commit, 1, 7)
        end as step_label,
        keyed.*
    from keyed
    cross join (values ('version'), ('commit')) as axes (axis)
    where case axes.axis when 'version' then keyed.version_rank else keyed.commit_order end is not null
)

select
    axis,
    step_rank,
    step_label,
    measurement_digest,
    kernel_name,
    kernel_provider,
    measured_provider,
    starts_with(kernel_provider, 'liger') as is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    liger_version,
    version_rank,
    benchmarked_commit,
    release,
    commit_order,
    snapshot,
    observed_at,
    p20,
    p50,
    p80,
    count(*) over series_step as runs_at_step,
    row_number() over (
        partition by
            axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config, step_rank
        order by observed_at desc nulls last, measurement_digest desc
    ) as run_recency
from stepped
window series_step as (
    partition by
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, step_rank
)
