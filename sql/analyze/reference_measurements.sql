/* MODEL
name: reference_measurements
materialized: table
incremental_key: [kernel_name, gpu_name]
depends_on: [ranked_measurements, regression_settings]
*/
-- reference_measurements: the non-liger providers measured beside each liger series and step
-- (a version, or a benchmarked commit: one row per axis).
--
-- For every liger-family run (ranked_measurements, is_liger), each non-liger
-- provider (torch, huggingface, torch_compile, megatron, deepspeed_tiled, ...)
-- of the same kernel, mode, metric, GPU, x and extra_config at the same step
-- is a reference. Of that provider's runs, the one nearest in time to the liger
-- run is taken (ties: the later run, then the smaller digest), and only if it
-- is within reference_max_gap_hours (same machine, same session). Every liger
-- run of the step takes part: reference_p50 is the median over the liger
-- runs of their nearest reference p50. `point_pairs` turns these into a
-- reference ratio per step pair.
-- Runs are paired only within a time bucket as wide as the gap allowed (and its neighbours): a
-- plain join on the series pairs every liger run with every reference run of that version, which
-- at 10 M synthetic facts took minutes and more than 3 GB.
with bucketed as (
    select
        ranked_measurements.*,
        regression_settings.reference_max_gap_hours as max_gap_hours,
        floor(epoch(ranked_measurements.observed_at)
            / (greatest(regression_settings.reference_max_gap_hours, 1e-6) * 3600.0)) as time_bucket
    from ranked_measurements
    cross join regression_settings
),

liger_runs as (
    select bucketed.*, bucketed.time_bucket + shift.step as near_bucket
    from bucketed
    cross join (values (-1), (0), (1)) as shift (step)
    where bucketed.is_liger
),

reference_runs as (
    select * from bucketed where not is_liger
),

candidates as (
    select
        liger_runs.kernel_name,
        liger_runs.kernel_provider,
        liger_runs.kernel_operation_mode,
        liger_runs.metric_name,
        liger_runs.gpu_name,
        liger_runs.x_name,
        liger_runs.x_value,
        liger_runs.extra_config,
        liger_runs.axis,
        liger_runs.step_rank,
        liger_runs.liger_version,
        liger_runs.measurement_digest as liger_digest,
        reference_runs.kernel_provider as reference_provider,
        reference_runs.measurement_digest as reference_digest,
        reference_runs.observed_at as reference_observed_at,
        reference_runs.p50 as reference_p50,
        abs(epoch(reference_runs.observed_at) - epoch(liger_runs.observed_at)) / 3600.0
            as gap_hours
    from liger_runs
    inner join reference_runs
        on reference_runs.kernel_name = liger_runs.kernel_name
        and reference_runs.kernel_operation_mode = liger_runs.kernel_operation_mode
        and reference_runs.metric_name = liger_runs.metric_name
        and reference_runs.gpu_name = liger_runs.gpu_name
        and reference_runs.x_name is not distinct from liger_runs.x_name
        and reference_runs.x_value is not distinct from liger_runs.x_value
        and reference_runs.extra_config is not distinct from liger_runs.extra_config
        and reference_runs.axis = liger_runs.axis
        and reference_runs.step_rank = liger_runs.step_rank
        and reference_runs.time_bucket = liger_runs.near_bucket
        and abs(epoch(reference_runs.observed_at) - epoch(liger_runs.observed_at)) / 3600.0
            <= liger_runs.max_gap_hours
),

nearest as (
    select
        candidates.*,
        row_number() over (
            partition by axis, liger_digest, reference_provider
            order by gap_hours, reference_observed_at desc, reference_digest
        ) as nearness
    from candidates
    cross join regression_settings
    where candidates.gap_hours <= regression_settings.reference_max_gap_hours
)

select
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    gpu_name,
    x_name,
    x_value,
    extra_config,
    axis,
    step_rank,
    max(liger_version) as liger_version,
    reference_provider,
    count(*) as matched_runs,
    median(reference_p50) as reference_p50,
    max(gap_hours) as gap_hours
from nearest
where nearness = 1
group by
    kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
    x_name, x_value, extra_config, axis, step_rank, reference_provider
