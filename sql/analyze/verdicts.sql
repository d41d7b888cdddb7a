/* MODEL
name: verdicts
materialized: table
depends_on: [point_pairs, regression_settings, sweep_pairs]
*/
-- verdicts: THE verdict rule, for single points and for whole sweeps.
--
-- One row per liger-family version pair: level 'point' (from point_pairs) or
-- 'sweep' (from sweep_pairs, on the geomeans over the shared x points). Both
-- levels carry the same evidence columns:
--   ratio, reference_ratio, normalized_ratio   (geomeans for a sweep)
--   points, points_banded   x points compared, and how many of them have
--                           separated p20-p80 bands in the direction of ratio
--   from/to_runs, from/to_spread_log           every run of both versions
--   threshold, threshold_log                   the noise threshold (noise_floor)
-- and are judged here, once. First match wins; |x| means |ln x| compared with
-- threshold_log = ln(1 + threshold):
--   insufficient  no ratio, or fewer points than required (a point needs 1, a
--                 sweep min_shared_points);
--   unstable      the runs of one version disagree beyond noise
--                 (from_spread_log or to_spread_log > threshold_log): which run
--                 counts would decide the answer, so none is given;
--   unchanged     |ratio| within noise (the reason says if the reference moved);
--   drift         |ratio| beyond noise, but a reference exists and the
--                 normalized change is within noise or points the other way:
--                 the machine moved, not Liger;
--   unchanged     beyond noise, but too few bands separate (a point: its bands
--                 overlap; a sweep: fewer than sweep_min_band_fraction of its
--                 points separate), when require_band_separation;
--   regression    worse, beyond noise raw and normalized, bands separated;
--   improvement   better, likewise.
-- Without a reference measured beside it the raw change alone is judged and
-- the reason says so.
with evidence as (
    select
        'point' as level,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        metric_unit,
        gpu_name,
        x_name,
        x_label,
        x_value,
        x_numeric,
        extra_config,
        from_version,
        to_version,
        from_version_rank,
        to_version_rank,
        from_observed_at,
        to_observed_at,
        from_p20,
        from_p50,
        from_p80,
        to_p20,
        to_p50,
        to_p80,
        from_runs,
        to_runs,
        from_spread_log,
        to_spread_log,
        cast(1 as bigint) as points,
        cast(case when bands_separated then 1 else 0 end as bigint) as points_banded,
        cast(case when direction = 'worse' and bands_separated then 1 else 0 end as bigint)
            as points_bands_worse,
        cast(case when direction = 'better' and bands_separated then 1 else 0 end as bigint)
            as points_bands_better,
        ratio,
        reference_providers,
        cast(reference_count as bigint) as reference_count,
        reference_ratio,
        normalized_ratio,
        threshold,
        threshold_log,
        noise_scope,
        cast(1 as bigint) as min_points,
        1.0 as min_band_fraction
    from point_pairs

    union all

    select
        'sweep' as level,
        sweep_pairs.kernel_name,
        sweep_pairs.kernel_provider,
        sweep_pairs.kernel_operation_mode,
        sweep_pairs.metric_name,
        sweep_pairs.metric_unit,
        sweep_pairs.gpu_name,
        sweep_pairs.x_name,
        cast(null as varchar) as x_label,
        cast(null as varchar) as x_value,
        cast(null as double) as x_numeric,
        sweep_pairs.extra_config,
        sweep_pairs.from_version,
        sweep_pairs.to_version,
        sweep_pairs.from_version_rank,
        sweep_pairs.to_version_rank,
        cast(null as timestamp) as from_observed_at,
        cast(null as timestamp) as to_observed_at,
        cast(null as double) as from_p20,
        cast(null as double) as from_p50,
        cast(null as double) as from_p80,
        cast(null as double) as to_p20,
        cast(null as double) as to_p50,
        cast(null as double) as to_p80,
        sweep_pairs.from_runs,
        sweep_pairs.to_runs,
        sweep_pairs.from_spread_log,
        sweep_pairs.to_spread_log,
        cast(sweep_pairs.shared_points as bigint) as points,
        cast(
            case
                when sweep_pairs.geomean_ratio > 1 then sweep_pairs.points_bands_worse
                else sweep_pairs.points_bands_better
            end as bigint
        ) as points_banded,
        cast(sweep_pairs.points_bands_worse as bigint) as points_bands_worse,
        cast(sweep_pairs.points_bands_better as bigint) as points_bands_better,
        sweep_pairs.geomean_ratio as ratio,
        sweep_pairs.reference_providers,
        cast(sweep_pairs.reference_points as bigint) as reference_count,
        sweep_pairs.geomean_reference_ratio as reference_ratio,
        sweep_pairs.geomean_normalized_ratio as normalized_ratio,
        sweep_pairs.threshold,
        sweep_pairs.threshold_log,
        sweep_pairs.noise_scope,
        cast(regression_settings.min_shared_points as bigint) as min_points,
        regression_settings.sweep_min_band_fraction as min_band_fraction
    from sweep_pairs
    cross join regression_settings
),

tests as (
    select
        evidence.*,
        cast(evidence.points_banded as double) / nullif(evidence.points, 0) as band_fraction,
        abs(ln(evidence.ratio)) > evidence.threshold_log as raw_beyond_noise,
        abs(ln(evidence.normalized_ratio)) > evidence.threshold_log as normalized_beyond_noise,
        coalesce(
            abs(ln(evidence.normalized_ratio)) > evidence.threshold_log
            and sign(ln(evidence.normalized_ratio)) = sign(ln(evidence.ratio)),
            false
        ) as reference_confirms,
        evidence.from_spread_log > evidence.threshold_log as from_unstable,
        evidence.to_spread_log > evidence.threshold_log as to_unstable,
        regression_settings.require_band_separation
    from evidence
    cross join regression_settings
),

judged as (
    select
        *,
        case
            when ratio is null or points < min_points then 'insufficient'
            when from_unstable or to_unstable then 'unstable'
            when not raw_beyond_noise then 'unchanged'
            when normalized_ratio is not null and not reference_confirms then 'drift'
            when require_band_separation and band_fraction < min_band_fraction then 'unchanged'
            when ratio > 1 then 'regression'
            else 'improvement'
        end as verdict,
        case
            when level = 'sweep'
                then 'geomean x' || cast(round(ratio, 3) as varchar)
                || ' over ' || cast(points as varchar) || ' points'
            else 'x' || cast(round(ratio, 3) as varchar)
        end as subject,
        ' (+-' || cast(round(100 * threshold, 1) as varchar) || '%)' as noise_text
    from tests
)

select
    level,
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    from_version,
    to_version,
    from_version_rank,
    to_version_rank,
    from_observed_at,
    to_observed_at,
    from_p20,
    from_p50,
    from_p80,
    to_p20,
    to_p50,
    to_p80,
    cast(from_runs as integer) as from_runs,
    cast(to_runs as integer) as to_runs,
    exp(from_spread_log) as from_spread,
    exp(to_spread_log) as to_spread,
    points,
    points_banded,
    points_bands_worse,
    points_bands_better,
    band_fraction,
    ratio,
    reference_providers,
    reference_count,
    reference_ratio,
    normalized_ratio,
    threshold,
    threshold_log,
    noise_scope,
    raw_beyond_noise,
    reference_confirms,
    verdict,
    case
        when verdict = 'insufficient' and level = 'sweep'
            then cast(points as varchar) || ' shared x point(s); a sweep verdict needs '
            || cast(min_points as varchar)
        when verdict = 'insufficient'
            then 'missing or non-positive p50 at one of the versions'
        when verdict = 'unstable'
            then concat_ws(
                '; ',
                case
                    when from_unstable
                        then cast(from_runs as varchar) || ' runs of ' || from_version
                        || ' differ x' || cast(round(exp(from_spread_log), 2) as varchar)
                end,
                case
                    when to_unstable
                        then cast(to_runs as varchar) || ' runs of ' || to_version
                        || ' differ x' || cast(round(exp(to_spread_log), 2) as varchar)
                end
            )
            || ', beyond noise' || noise_text || ': ' || subject
            || ' between the medians is not a verdict'
        when verdict = 'unchanged' and not raw_beyond_noise and normalized_beyond_noise
            then subject || ' is within noise' || noise_text || '; the reference ('
            || reference_providers || ') moved x' || cast(round(reference_ratio, 3) as varchar)
        when verdict = 'unchanged' and not raw_beyond_noise
            then subject || ' is within noise' || noise_text
        when verdict = 'drift'
            then subject || ' is beyond noise' || noise_text || ' but the reference ('
            || reference_providers || ') moved x' || cast(round(reference_ratio, 3) as varchar)
            || '; normalized x' || cast(round(normalized_ratio, 3) as varchar)
            || ': the machine moved, not Liger'
        when verdict = 'unchanged' and level = 'sweep'
            then subject || ' is beyond noise' || noise_text || ' but only '
            || cast(points_banded as varchar) || ' of ' || cast(points as varchar)
            || ' points have separated p20-p80 bands'
        when verdict = 'unchanged'
            then subject || ' is beyond noise' || noise_text || ' but the p20-p80 bands overlap'
        when normalized_ratio is null
            then subject || ', beyond noise' || noise_text || ', '
            || cast(points_banded as varchar) || '/' || cast(points as varchar)
            || ' points with separated bands; no reference measured beside it, raw change only'
        else subject || ', beyond noise' || noise_text || ', '
            || cast(points_banded as varchar) || '/' || cast(points as varchar)
            || ' points with separated bands; x' || cast(round(normalized_ratio, 3) as varchar)
            || ' relative to ' || reference_providers
    end as reason
from judged
