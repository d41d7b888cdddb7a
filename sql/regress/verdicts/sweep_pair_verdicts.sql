/* MODEL
name: sweep_pair_verdicts
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, axis]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, axis, to_step_rank]
chain: {steps: series_steps, within: [kernel_provider, x_value], around: 1}
depends_on: [verdicts]
*/
-- sweep_pair_verdicts: sweep_regressions' rows as stored, kept per step like the verdicts they are made
-- of (the same `chain`, so a new run rewrites the pairs whose verdicts it rewrote). What moves with
-- every run whatever it touched (is_newest, the alert of a pair) is added by the sweep_regressions view.
-- The sweep rows of `verdicts` on the version axis (where the rule and its reasons live), with the
-- point verdicts of the same pair counted beside them. geomean_ratio is the
-- geometric mean over the x points both versions measured of
-- median-of-runs to / median-of-runs from; from_runs / to_runs say how many
-- runs each side had (the most any point had), from_spread / to_spread how far
-- they disagree (geomean over the points measured more than once).
with point_counts as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        from_version_rank,
        to_version_rank,
        count(case when verdict = 'regression' then 1 end) as points_regressed,
        count(case when verdict = 'improvement' then 1 end) as points_improved,
        count(case when verdict = 'drift' then 1 end) as points_drift,
        count(case when verdict = 'unstable' then 1 end) as points_unstable
    from verdicts
    where level = 'point' and axis = 'version'
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, from_version_rank, to_version_rank
)

select
    sweeps.kernel_name,
    sweeps.kernel_provider,
    sweeps.kernel_operation_mode,
    sweeps.metric_name,
    sweeps.metric_unit,
    sweeps.gpu_name,
    sweeps.x_name,
    sweeps.extra_config,
    sweeps.from_version,
    sweeps.to_version,
    sweeps.from_version_rank,
    sweeps.to_version_rank,
    sweeps.from_runs,
    sweeps.to_runs,
    sweeps.from_spread,
    sweeps.to_spread,
    sweeps.points as shared_points,
    sweeps.reference_count as reference_points,
    sweeps.reference_providers,
    sweeps.ratio as geomean_ratio,
    sweeps.reference_ratio as geomean_reference_ratio,
    sweeps.normalized_ratio as geomean_normalized_ratio,
    coalesce(point_counts.points_regressed, 0) as points_regressed,
    coalesce(point_counts.points_improved, 0) as points_improved,
    coalesce(point_counts.points_drift, 0) as points_drift,
    coalesce(point_counts.points_unstable, 0) as points_unstable,
    sweeps.points_bands_worse,
    sweeps.points_bands_better,
    sweeps.band_fraction,
    sweeps.threshold,
    sweeps.noise_scope,
    sweeps.threshold_source,
    sweeps.min_detectable_change,
    sweeps.verdict,
    sweeps.reason,
    sweeps.axis,
    sweeps.to_step_rank
from verdicts as sweeps
left join point_counts
    on point_counts.kernel_name = sweeps.kernel_name
    and point_counts.kernel_provider = sweeps.kernel_provider
    and point_counts.kernel_operation_mode = sweeps.kernel_operation_mode
    and point_counts.metric_name = sweeps.metric_name
    and point_counts.gpu_name = sweeps.gpu_name
    and point_counts.x_name is not distinct from sweeps.x_name
    and point_counts.extra_config is not distinct from sweeps.extra_config
    and point_counts.from_version_rank = sweeps.from_version_rank
    and point_counts.to_version_rank = sweeps.to_version_rank
where sweeps.level = 'sweep' and sweeps.axis = 'version'
