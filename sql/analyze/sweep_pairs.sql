/* MODEL
name: sweep_pairs
depends_on: [point_pairs, sweep_versions]
*/
-- sweep_pairs: the evidence for one liger-family sweep and consecutive version pair.
--
-- A sweep is a series without x_value (see ranked_measurements). Consecutive
-- versions are consecutive among the versions the sweep was measured at (PEP
-- 440 order). Over the x points BOTH versions measured (exactly the rows of
-- `point_pairs` for this version pair):
--   geomean_ratio            exp(avg(ln(to_p50 / from_p50)))
--   geomean_normalized_ratio exp(avg(ln(normalized_ratio))) over the shared
--                            points that have a reference (NULL if none)
--   from/to_spread_log       the average, over the shared points measured more
--                            than once at that version, of the within-version
--                            spread ln(p50_max / p50_min) (0 with one run):
--                            "the two runs of 0.8.5 differ x2.2"
--   from_runs / to_runs      the most runs any point of the sweep had at that
--                            version.
-- Judged in `verdicts` with the same rule as a single point.
with aggregated as (
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
        count(*) as shared_points,
        count(normalized_ratio) as reference_points,
        array_to_string(
            list_sort(list_distinct(flatten(list(string_split(reference_providers, ','))))),
            ','
        ) as reference_providers,
        exp(avg(log_ratio)) as geomean_ratio,
        exp(avg(ln(reference_ratio))) as geomean_reference_ratio,
        exp(avg(ln(normalized_ratio))) as geomean_normalized_ratio,
        coalesce(avg(case when from_runs > 1 then from_spread_log end), 0) as from_spread_log,
        coalesce(avg(case when to_runs > 1 then to_spread_log end), 0) as to_spread_log,
        count(case when bands_separated and direction = 'worse' then 1 end) as points_bands_worse,
        count(case when bands_separated and direction = 'better' then 1 end)
            as points_bands_better,
        max(threshold) as threshold,
        max(threshold_log) as threshold_log,
        max(noise_scope) as noise_scope
    from point_pairs
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, from_version_rank, to_version_rank
)

select
    sweep_versions.kernel_name,
    sweep_versions.kernel_provider,
    sweep_versions.kernel_operation_mode,
    sweep_versions.metric_name,
    sweep_versions.metric_unit,
    sweep_versions.gpu_name,
    sweep_versions.x_name,
    sweep_versions.extra_config,
    sweep_versions.from_version,
    sweep_versions.liger_version as to_version,
    sweep_versions.from_version_rank,
    sweep_versions.version_rank as to_version_rank,
    sweep_versions.from_runs,
    sweep_versions.runs as to_runs,
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
    aggregated.threshold,
    aggregated.threshold_log,
    aggregated.noise_scope
from sweep_versions
left join aggregated
    on aggregated.kernel_name = sweep_versions.kernel_name
    and aggregated.kernel_provider = sweep_versions.kernel_provider
    and aggregated.kernel_operation_mode = sweep_versions.kernel_operation_mode
    and aggregated.metric_name = sweep_versions.metric_name
    and aggregated.gpu_name = sweep_versions.gpu_name
    and aggregated.x_name is not distinct from sweep_versions.x_name
    and aggregated.extra_config is not distinct from sweep_versions.extra_config
    and aggregated.from_version_rank = sweep_versions.from_version_rank
    and aggregated.to_version_rank = sweep_versions.version_rank
where sweep_versions.from_version is not null
