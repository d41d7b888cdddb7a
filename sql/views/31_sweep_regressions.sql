-- sweep_regressions: the headline list -- one verdict per liger-family sweep and version pair.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- A sweep is a series without x_value: kernel_name, kernel_provider,
-- kernel_operation_mode, metric_name, gpu_name, x_name, extra_config.
-- Consecutive versions are consecutive among the versions the sweep was
-- measured at (PEP 440 order). Over the x points BOTH versions measured
-- (exactly the point pairs of `regressions` for this version pair):
--   geomean_ratio            = exp(avg(ln(to_p50 / from_p50)))
--   geomean_normalized_ratio = exp(avg(ln(normalized_ratio))) over the shared
--                              points that have a reference (NULL if none)
-- Verdict, first match wins (same logic as `regressions`, on the geomeans):
--   insufficient  fewer than min_shared_points shared x points;
--   unchanged     geomean within noise;
--   drift         beyond noise, but the reference moved with it (normalized
--                 geomean within noise or pointing the other way);
--   unchanged     fewer than sweep_min_band_fraction of the shared points have
--                 separated p20-p80 bands in the direction of the change;
--   regression / improvement otherwise.
-- is_newest: to_version is the newest version measured anywhere.
create or replace view sweep_regressions as
with settings as (
    select * from regression_settings
),

sweep_versions as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        version_rank,
        max(liger_version) as liger_version,
        any_value(metric_unit) as metric_unit
    from series_versions
    where is_liger
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, version_rank
),

sweep_pairs as (
    select
        *,
        lag(liger_version) over sweep_order as from_version,
        lag(version_rank) over sweep_order as from_version_rank
    from sweep_versions
    window sweep_order as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, extra_config
        order by version_rank
    )
),

points as (
    select * from regressions where ratio is not null
),

aggregated as (
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
        exp(avg(log_normalized_ratio)) as geomean_normalized_ratio,
        count_if(verdict = 'regression')::bigint as points_regressed,
        count_if(verdict = 'improvement')::bigint as points_improved,
        count_if(verdict = 'drift')::bigint as points_drift,
        count_if(bands_separated and direction = 'worse')::bigint as points_bands_worse,
        count_if(bands_separated and direction = 'better')::bigint as points_bands_better,
        max(threshold) as threshold,
        max(threshold_log) as threshold_log,
        any_value(noise_scope) as noise_scope
    from points
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, from_version_rank, to_version_rank
),

joined as (
    select
        sweep_pairs.kernel_name,
        sweep_pairs.kernel_provider,
        sweep_pairs.kernel_operation_mode,
        sweep_pairs.metric_name,
        sweep_pairs.metric_unit,
        sweep_pairs.gpu_name,
        sweep_pairs.x_name,
        sweep_pairs.extra_config,
        sweep_pairs.from_version,
        sweep_pairs.liger_version as to_version,
        sweep_pairs.from_version_rank,
        sweep_pairs.version_rank as to_version_rank,
        coalesce(aggregated.shared_points, 0) as shared_points,
        coalesce(aggregated.reference_points, 0) as reference_points,
        nullif(aggregated.reference_providers, '') as reference_providers,
        aggregated.geomean_ratio,
        aggregated.geomean_reference_ratio,
        aggregated.geomean_normalized_ratio,
        coalesce(aggregated.points_regressed, 0) as points_regressed,
        coalesce(aggregated.points_improved, 0) as points_improved,
        coalesce(aggregated.points_drift, 0) as points_drift,
        coalesce(aggregated.points_bands_worse, 0) as points_bands_worse,
        coalesce(aggregated.points_bands_better, 0) as points_bands_better,
        aggregated.threshold,
        aggregated.threshold_log,
        aggregated.noise_scope,
        settings.min_shared_points,
        settings.sweep_min_band_fraction,
        settings.require_band_separation
    from sweep_pairs
    left join aggregated
        on aggregated.kernel_name = sweep_pairs.kernel_name
        and aggregated.kernel_provider = sweep_pairs.kernel_provider
        and aggregated.kernel_operation_mode = sweep_pairs.kernel_operation_mode
        and aggregated.metric_name = sweep_pairs.metric_name
        and aggregated.gpu_name = sweep_pairs.gpu_name
        and aggregated.x_name is not distinct from sweep_pairs.x_name
        and aggregated.extra_config is not distinct from sweep_pairs.extra_config
        and aggregated.from_version_rank = sweep_pairs.from_version_rank
        and aggregated.to_version_rank = sweep_pairs.version_rank
    cross join settings
    where sweep_pairs.from_version is not null
),

tests as (
    select
        *,
        abs(ln(geomean_ratio)) > threshold_log as raw_beyond_noise,
        geomean_normalized_ratio is not null
            and abs(ln(geomean_normalized_ratio)) > threshold_log
            and sign(ln(geomean_normalized_ratio)) = sign(ln(geomean_ratio))
            as reference_confirms,
        case
            when geomean_ratio > 1 then points_bands_worse
            else points_bands_better
        end::double / nullif(shared_points, 0) as band_fraction
    from joined
),

judged as (
    select
        *,
        case
            when shared_points < min_shared_points or geomean_ratio is null then 'insufficient'
            when not raw_beyond_noise then 'unchanged'
            when geomean_normalized_ratio is not null and not reference_confirms then 'drift'
            when require_band_separation and band_fraction < sweep_min_band_fraction
                then 'unchanged'
            when geomean_ratio > 1 then 'regression'
            else 'improvement'
        end as verdict
    from tests
)

select
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    extra_config,
    from_version,
    to_version,
    from_version_rank,
    to_version_rank,
    to_version_rank = (select max(version_rank) from liger_version_order) as is_newest,
    shared_points,
    reference_points,
    reference_providers,
    geomean_ratio,
    geomean_reference_ratio,
    geomean_normalized_ratio,
    points_regressed,
    points_improved,
    points_drift,
    points_bands_worse,
    points_bands_better,
    band_fraction,
    threshold,
    noise_scope,
    verdict,
    case
        when verdict = 'insufficient'
            then printf(
                '%d shared x point(s); a sweep verdict needs %d',
                shared_points, min_shared_points
            )
        when verdict = 'unchanged' and not raw_beyond_noise
            then printf(
                'geomean x%.3f over %d points is within noise (+-%.1f%%)',
                geomean_ratio, shared_points, 100 * threshold
            )
        when verdict = 'drift'
            then printf(
                'geomean x%.3f is beyond noise (+-%.1f%%) but the reference (%s) moved x%.3f; '
                || 'normalized x%.3f: the machine moved, not Liger',
                geomean_ratio, 100 * threshold, reference_providers,
                geomean_reference_ratio, geomean_normalized_ratio
            )
        when verdict = 'unchanged'
            then printf(
                'geomean x%.3f is beyond noise (+-%.1f%%) but only %d of %d points have '
                || 'separated p20-p80 bands',
                geomean_ratio, 100 * threshold,
                case when geomean_ratio > 1 then points_bands_worse else points_bands_better end,
                shared_points
            )
        when geomean_normalized_ratio is null
            then printf(
                'geomean x%.3f over %d points, beyond noise (+-%.1f%%), %d/%d points with '
                || 'separated bands; no reference measured beside it, raw change only',
                geomean_ratio, shared_points, 100 * threshold,
                case when geomean_ratio > 1 then points_bands_worse else points_bands_better end,
                shared_points
            )
        else printf(
            'geomean x%.3f over %d points, beyond noise (+-%.1f%%), %d/%d points with '
            || 'separated bands; x%.3f relative to %s',
            geomean_ratio, shared_points, 100 * threshold,
            case when geomean_ratio > 1 then points_bands_worse else points_bands_better end,
            shared_points, geomean_normalized_ratio, reference_providers
        )
    end as reason
from judged
