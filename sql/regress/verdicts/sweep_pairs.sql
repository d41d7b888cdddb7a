/* MODEL
name: sweep_pairs
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, axis, to_step_rank]
depends_on: [point_pairs, sweep_steps]
*/
-- sweep_pairs: the evidence for one liger-family sweep and pair of consecutive steps, on both
-- axes.
--
-- A sweep is a series without x_value (see ranked_measurements). Consecutive
-- steps are consecutive among the steps the sweep was measured at (PEP 440
-- order of versions, or commit order). Over the x points BOTH steps measured
-- (exactly the rows of `point_pairs` for this pair):
--   geomean_ratio            exp(avg(ln(to_p50 / from_p50)))
--   geomean_normalized_ratio exp(avg(ln(normalized_ratio))) over the shared
--                            points that have a reference (NULL if none)
--   from/to_spread_log       the average, over the shared points measured more
--                            than once at that step, of the within-step
--                            spread ln(p50_max / p50_min) (0 with one run)
--   from_runs / to_runs      the most runs any point of the sweep had at that step
--   threshold                exp(avg(ln(1 + point threshold))) - 1: the sweep's points may
--                            span durations, each with its own measured noise
--   threshold_source         the source of the points' thresholds (the greatest text when they differ)
-- Judged in `verdicts` with the same rule as a single point.
-- Every average is exact, in no thread's order: its terms are put on a grid of 2^-32 (whole numbers
-- times 2^-32; a log to 2e-10) and whole numbers below 2^53 add up exactly in any order. A plain sum
-- of doubles depends on the order the threads add them in: two clean runs of the same input gave
-- ratios that differed in the last digit (tests/e2e/test_output_faults.py).
with aggregated as (
    select
        axis,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        from_step_rank,
        to_step_rank,
        count(*) as shared_points,
        count(normalized_ratio) as reference_points,
        array_to_string(
            list_sort(list_distinct(flatten(list(string_split(reference_providers, ','))))),
            ','
        ) as reference_providers,
        exp(avg(round(log_ratio * 4294967296.0)) / 4294967296.0) as geomean_ratio,
        exp(avg(round(ln(reference_ratio) * 4294967296.0)) / 4294967296.0) as geomean_reference_ratio,
        exp(avg(round(ln(normalized_ratio) * 4294967296.0)) / 4294967296.0) as geomean_normalized_ratio,
        coalesce(
            avg(round(case when from_runs > 1 then from_spread_log end * 4294967296.0)) / 4294967296.0, 0
        ) as from_spread_log,
        coalesce(
            avg(round(case when to_runs > 1 then to_spread_log end * 4294967296.0)) / 4294967296.0, 0
        ) as to_spread_log,
        count(case when bands_separated and direction = 'worse' then 1 end) as points_bands_worse,
        count(case when bands_separated and direction = 'better' then 1 end)
            as points_bands_better,
        avg(round(threshold_log * 4294967296.0)) / 4294967296.0 as threshold_log,
        max(noise_scope) as noise_scope,
        max(threshold_source) as threshold_source
    from point_pairs
    group by
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, from_step_rank, to_step_rank
)

select
    sweep_steps.axis,
    sweep_steps.kernel_name,
    sweep_steps.kernel_provider,
    sweep_steps.kernel_operation_mode,
    sweep_steps.metric_name,
    sweep_steps.metric_unit,
    sweep_steps.gpu_name,
    sweep_steps.x_name,
    sweep_steps.extra_config,
    sweep_steps.from_label,
    sweep_steps.step_label as to_label,
    sweep_steps.from_step_rank,
    sweep_steps.step_rank as to_step_rank,
    sweep_steps.from_version,
    sweep_steps.liger_version as to_version,
    sweep_steps.from_version_rank,
    sweep_steps.version_rank as to_version_rank,
    sweep_steps.from_commit,
    sweep_steps.benchmarked_commit as to_commit,
    sweep_steps.from_release,
    sweep_steps.release as to_release,
    sweep_steps.from_runs,
    sweep_steps.runs as to_runs,
    coalesce(aggregated.shared_points, 0) as shared_points,
    coalesce(aggregated.reference_points, 0) as reference_points,
    nullif(aggregated.reference_providers, '') as reference_providers,
    aggregated.geomean_ratio,
    aggregated.geomean_reference_ratio,
    aggregated.geomean_normalized_ratio,
    aggregated.from_spread_log,
    aggregated.to_spread_log,
    coalesce(aggregated.points_bands_worse, 0) as points_bands_worse,
    coalesce(aggregated.points_bands_better, 0) as points_bands_better,
    exp(aggregated.threshold_log) - 1 as threshold,
    aggregated.threshold_log,
    aggregated.noise_scope,
    aggregated.threshold_source
from sweep_steps
left join aggregated
    on aggregated.axis = sweep_steps.axis
    and aggregated.kernel_name = sweep_steps.kernel_name
    and aggregated.kernel_provider = sweep_steps.kernel_provider
    and aggregated.kernel_operation_mode = sweep_steps.kernel_operation_mode
    and aggregated.metric_name = sweep_steps.metric_name
    and aggregated.gpu_name = sweep_steps.gpu_name
    and aggregated.x_name is not distinct from sweep_steps.x_name
    and aggregated.extra_config is not distinct from sweep_steps.extra_config
    and aggregated.from_step_rank = sweep_steps.from_step_rank
    and aggregated.to_step_rank = sweep_steps.step_rank
where sweep_steps.from_step_rank is not null
