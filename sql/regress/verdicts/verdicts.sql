/* MODEL
name: verdicts
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, axis]
partitions_from: ranked_measurements
grain: [level, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, to_step_rank]
depends_on: [point_pairs, regression_settings, sweep_pairs]
chain: {steps: series_steps, within: [kernel_provider, x_value], around: 1}
moved_by:
  noise_judged: >-
    select distinct e.kernel_name, e.kernel_operation_mode, e.metric_name, e.gpu_name, e.x_name,
    e.extra_config, e.axis
    from point_evidence as e inner join noise_judged__moved as m
    on m.gpu_name = e.gpu_name and m.metric_name = e.metric_name
    and (m.scope = 'bucket' and m.duration_bucket = e.duration_bucket
    or m.scope = 'gpu' and not exists (
    select 1 from noise_judged as b where b.scope = 'bucket' and b.trusted and b.gpu_name = e.gpu_name
    and b.metric_name = e.metric_name and b.duration_bucket = e.duration_bucket))
*/
-- verdicts: THE verdict rule, for single points and whole sweeps, on both axes.
--
-- One row per liger-family pair of consecutive steps: level 'point' (from point_pairs) or
-- 'sweep' (from sweep_pairs, on the geomeans over the shared x points), axis 'version' (PEP 440
-- versions) or 'commit' (benchmarked commits in commit order). Every level and axis carries the
-- same evidence columns:
--   ratio, reference_ratio, normalized_ratio   (geomeans for a sweep)
--   points, points_banded   x points compared, and how many of them have
--                           separated p20-p80 bands in the direction of ratio
--   from/to_runs, from/to_spread_log           every run of both steps
--   threshold, threshold_log, threshold_source the measured noise (noise_floor, point_pairs)
-- and are judged here, once. First match wins; |x| means |ln x| compared with
-- threshold_log = ln(1 + threshold):
--   insufficient  no ratio, or fewer points than required (a point needs 1, a
--                 sweep min_shared_points);
--   unstable      the runs of one step disagree beyond noise
--                 (from_spread_log or to_spread_log > threshold_log): which run
--                 counts would decide the answer, so none is given;
--   unchanged     |ratio| within noise (the reason says the smallest change this pair could
--                 have told from noise, and where that noise was measured);
--   transient     |ratio| beyond noise, and the neighbouring pair of the same series takes it
--                 back: beyond its own noise in the other direction, the two together within
--                 noise. A one-step excursion (both of its pairs get this verdict);
--   drift         |ratio| beyond noise, but a reference exists and the
--                 normalized change is within noise or points the other way:
--                 the machine moved, not Liger;
--   inconclusive  beyond noise, but too few bands separate (a point: its bands
--                 overlap; a sweep: fewer than sweep_min_band_fraction of its
--                 points separate), when require_band_separation, and a side has fewer than
--                 settle_runs runs: the reason says how many more runs would settle it. With
--                 settle_runs runs on each side that agree (not unstable) the medians decide;
--   regression    worse, beyond noise raw and normalized, bands separated (or settled by runs);
--   improvement   better, likewise.
-- Without a reference measured beside it the raw change alone is judged and
-- the reason says so.
-- Kept per step (`chain`): a new run judges again the pairs its steps changed and the pairs beside
-- them (a neighbour decides `transient`), and the sweeps a moved row of the judged noise
-- (noise_judged) reaches: a bucket's row its bucket's pairs, a GPU's row the pairs of that GPU and
-- metric without a trusted bucket row (point_pairs takes the bucket's row where it is trusted).
with evidence as (
    select
        'point' as level,
        axis,
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
        from_label,
        to_label,
        from_step_rank,
        to_step_rank,
        from_version,
        to_version,
        from_version_rank,
        to_version_rank,
        from_commit,
        to_commit,
        from_release,
        to_release,
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
        threshold_source,
        cast(1 as bigint) as min_points,
        1.0 as min_band_fraction
    from point_pairs

    union all

    select
        'sweep' as level,
        sweep_pairs.axis,
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
        sweep_pairs.from_label,
        sweep_pairs.to_label,
        sweep_pairs.from_step_rank,
        sweep_pairs.to_step_rank,
        sweep_pairs.from_version,
        sweep_pairs.to_version,
        sweep_pairs.from_version_rank,
        sweep_pairs.to_version_rank,
        sweep_pairs.from_commit,
        sweep_pairs.to_commit,
        sweep_pairs.from_release,
        sweep_pairs.to_release,
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
        sweep_pairs.threshold_source,
        cast(regression_settings.min_shared_points as bigint) as min_points,
        regression_settings.sweep_min_band_fraction as min_band_fraction
    from sweep_pairs
    cross join regression_settings
),

tests as (
    select
        evidence.*,
        ln(evidence.ratio) as log_ratio,
        cast(evidence.points_banded as double) / nullif(evidence.points, 0) as band_fraction,
        abs(ln(evidence.ratio)) > evidence.threshold_log as raw_beyond_noise,
        abs(ln(evidence.normalized_ratio)) > evidence.threshold_log as normalized_beyond_noise,
        coalesce(
            abs(ln(evidence.normalized_ratio)) > evidence.threshold_log
            and (ln(evidence.normalized_ratio) > 0) = (ln(evidence.ratio) > 0),
            false
        ) as reference_confirms,
        evidence.from_spread_log > evidence.threshold_log as from_unstable,
        evidence.to_spread_log > evidence.threshold_log as to_unstable,
        regression_settings.require_band_separation,
        regression_settings.settle_runs
    from evidence
    cross join regression_settings
),

neighbours as (
    select
        tests.*,
        lag(log_ratio) over series_chain as previous_log_ratio,
        lag(threshold_log) over series_chain as previous_threshold_log,
        lag(from_label) over series_chain as previous_from_label,
        lead(log_ratio) over series_chain as next_log_ratio,
        lead(threshold_log) over series_chain as next_threshold_log,
        lead(to_label) over series_chain as next_to_label
    from tests
    window series_chain as (
        partition by
            level, axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config
        order by to_step_rank
    )
),

excursions as (
    select
        neighbours.*,
        coalesce(
            abs(next_log_ratio) > next_threshold_log
            and (next_log_ratio > 0) <> (log_ratio > 0)
            and abs(log_ratio + next_log_ratio) <= threshold_log,
            false
        ) as taken_back_next,
        coalesce(
            abs(previous_log_ratio) > previous_threshold_log
            and (previous_log_ratio > 0) <> (log_ratio > 0)
            and abs(log_ratio + previous_log_ratio) <= threshold_log,
            false
        ) as takes_back_previous
    from neighbours
),

judged as (
    select
        *,
        case
            when ratio is null or points < min_points then 'insufficient'
            when from_unstable or to_unstable then 'unstable'
            when not raw_beyond_noise then 'unchanged'
            when taken_back_next or takes_back_previous then 'transient'
            when normalized_ratio is not null and not reference_confirms then 'drift'
            when require_band_separation and band_fraction < min_band_fraction
                and least(from_runs, to_runs) < settle_runs then 'inconclusive'
            when ratio > 1 then 'regression'
            else 'improvement'
        end as verdict,
        case
            when level = 'sweep'
                then 'geomean x' || cast(round(ratio, 3) as varchar)
                || ' over ' || cast(points as varchar) || ' points'
            else 'x' || cast(round(ratio, 3) as varchar)
        end as subject,
        ' (+-' || cast(round(100 * threshold, 1) as varchar) || '%, ' || threshold_source || ')'
            as noise_text,
        cast(round(100 * threshold, 1) as varchar) || '%' as detectable_text
    from excursions
)

select
    level,
    axis,
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
    from_label,
    to_label,
    from_step_rank,
    to_step_rank,
    from_version,
    to_version,
    from_version_rank,
    to_version_rank,
    from_commit,
    to_commit,
    from_release,
    to_release,
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
    threshold_source,
    threshold as min_detectable_change,
    raw_beyond_noise,
    reference_confirms,
    verdict,
    case
        when verdict = 'insufficient' and level = 'sweep'
            then cast(points as varchar) || ' shared x point(s); a sweep verdict needs '
            || cast(min_points as varchar)
        when verdict = 'insufficient'
            then 'missing or non-positive p50 at one of the steps'
        when verdict = 'unstable'
            then concat_ws(
                '; ',
                case
                    when from_unstable
                        then cast(from_runs as varchar) || ' runs of ' || from_label
                        || ' differ x' || cast(round(exp(from_spread_log), 2) as varchar)
                end,
                case
                    when to_unstable
                        then cast(to_runs as varchar) || ' runs of ' || to_label
                        || ' differ x' || cast(round(exp(to_spread_log), 2) as varchar)
                end
            )
            || ', beyond noise' || noise_text || ': ' || subject
            || ' between the medians is not a verdict'
        when verdict = 'unchanged'
            then subject || ' is within noise: at this duration on this GPU a change under '
            || detectable_text || ' cannot be told from noise (' || threshold_source || ')'
            || case
                when normalized_beyond_noise
                    then '; the reference (' || reference_providers || ') moved x'
                    || cast(round(reference_ratio, 3) as varchar)
                else ''
            end
        when verdict = 'transient' and taken_back_next
            then subject || ' at ' || to_label || ' is beyond noise' || noise_text
            || ', and the next step takes it back (' || to_label || ' -> ' || next_to_label
            || ' x' || cast(round(exp(next_log_ratio), 3) as varchar)
            || '): a one-step excursion at ' || to_label
        when verdict = 'transient'
            then subject || ' at ' || to_label || ' is beyond noise' || noise_text
            || ' and takes back the step before it (' || previous_from_label || ' -> ' || from_label
            || ' x' || cast(round(exp(previous_log_ratio), 3) as varchar)
            || '): a one-step excursion at ' || from_label
        when verdict = 'drift'
            then subject || ' is beyond noise' || noise_text || ' but the reference ('
            || reference_providers || ') moved x' || cast(round(reference_ratio, 3) as varchar)
            || '; normalized x' || cast(round(normalized_ratio, 3) as varchar)
            || ': the machine moved, not Liger'
        when verdict = 'inconclusive'
            then subject || ' is beyond noise' || noise_text || ' but '
            || case
                when level = 'sweep'
                    then 'only ' || cast(points_banded as varchar) || ' of ' || cast(points as varchar)
                    || ' points have separated p20-p80 bands'
                else 'the p20-p80 bands overlap'
            end
            || ', with ' || cast(from_runs as varchar) || ' run(s) of ' || from_label || ' and '
            || cast(to_runs as varchar) || ' of ' || to_label || ': '
            || concat_ws(
                ' and ',
                case
                    when from_runs < settle_runs
                        then cast(settle_runs - from_runs as varchar) || ' more run(s) of ' || from_label
                end,
                case
                    when to_runs < settle_runs
                        then cast(settle_runs - to_runs as varchar) || ' more run(s) of ' || to_label
                end
            )
            || ' would settle it'
        when normalized_ratio is null
            then subject || ', beyond noise' || noise_text || ', '
            || cast(points_banded as varchar) || '/' || cast(points as varchar)
            || ' points with separated bands'
            || case
                when band_fraction < min_band_fraction
                    then ', but ' || cast(least(from_runs, to_runs) as varchar)
                    || '+ runs on each side agree'
                else ''
            end
            || '; no reference measured beside it, raw change only'
        else subject || ', beyond noise' || noise_text || ', '
            || cast(points_banded as varchar) || '/' || cast(points as varchar)
            || ' points with separated bands'
            || case
                when band_fraction < min_band_fraction
                    then ', but ' || cast(least(from_runs, to_runs) as varchar)
                    || '+ runs on each side agree'
                else ''
            end
            || '; x' || cast(round(normalized_ratio, 3) as varchar)
            || ' relative to ' || reference_providers
    end as reason
from judged
