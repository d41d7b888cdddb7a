-- regressions: one verdict per liger-family series and consecutive version pair.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- Inputs per pair (all from `version_changes`):
--   ratio            = to_p50 / from_p50 (lower is better: > 1 is worse)
--   normalized_ratio = ratio / reference_ratio, where reference_ratio is the
--                      geometric mean, over the non-liger providers measured
--                      beside liger at BOTH versions, of ref_to / ref_from
--                      (= (liger_to / ref_to) / (liger_from / ref_from)).
--   threshold        = noise of the kernel/provider/mode/metric/GPU group
--                      (`noise_floor`; fallback metric, then overall), never
--                      below min_noise_floor.
-- Verdict, first match wins (|x| means |ln x| compared with ln(1 + threshold)):
--   insufficient  a p50 is missing or not positive;
--   unchanged     |ratio| within noise (the reason says if the reference moved);
--   drift         |ratio| beyond noise, but a reference exists and the
--                 normalized change is within noise or points the other way:
--                 the machine moved, not Liger;
--   unchanged     beyond noise but the p20-p80 bands overlap
--                 (require_band_separation);
--   regression    worse, beyond noise raw and normalized, bands separated;
--   improvement   better, likewise.
-- Without a reference measured beside it the raw change alone is judged and the
-- reason says so.
create or replace view regressions as
with settings as (
    select * from regression_settings
),

changes as (
    select * from version_changes where is_liger
),

noise as (
    select * from noise_floor
),

with_threshold as (
    select
        changes.*,
        coalesce(group_noise.threshold, metric_noise.threshold, overall_noise.threshold)
            as threshold,
        coalesce(
            group_noise.threshold_log, metric_noise.threshold_log, overall_noise.threshold_log
        ) as threshold_log,
        case
            when group_noise.scope is not null then 'group'
            when metric_noise.scope is not null then 'metric'
            else 'overall'
        end as noise_scope
    from changes
    left join noise as group_noise
        on group_noise.scope = 'group'
        and group_noise.kernel_name = changes.kernel_name
        and group_noise.kernel_provider = changes.kernel_provider
        and group_noise.kernel_operation_mode = changes.kernel_operation_mode
        and group_noise.metric_name = changes.metric_name
        and group_noise.gpu_name = changes.gpu_name
    left join noise as metric_noise
        on metric_noise.scope = 'metric'
        and metric_noise.metric_name = changes.metric_name
    cross join (select * from noise where scope = 'overall') as overall_noise
),

reference_pairs as (
    select
        changes.kernel_name,
        changes.kernel_provider,
        changes.kernel_operation_mode,
        changes.metric_name,
        changes.gpu_name,
        changes.x_name,
        changes.x_value,
        changes.extra_config,
        changes.from_version_rank,
        changes.to_version_rank,
        string_agg(ref_from.reference_provider, ',' order by ref_from.reference_provider)
            as reference_providers,
        count(*) as reference_count,
        exp(avg(ln(ref_from.reference_p50))) as reference_from_p50,
        exp(avg(ln(ref_to.reference_p50))) as reference_to_p50,
        exp(avg(ln(ref_to.reference_p50 / ref_from.reference_p50))) as reference_ratio
    from changes
    inner join reference_measurements as ref_from
        on ref_from.kernel_name = changes.kernel_name
        and ref_from.kernel_provider = changes.kernel_provider
        and ref_from.kernel_operation_mode = changes.kernel_operation_mode
        and ref_from.metric_name = changes.metric_name
        and ref_from.gpu_name = changes.gpu_name
        and ref_from.x_name is not distinct from changes.x_name
        and ref_from.x_value is not distinct from changes.x_value
        and ref_from.extra_config is not distinct from changes.extra_config
        and ref_from.version_rank = changes.from_version_rank
    inner join reference_measurements as ref_to
        on ref_to.kernel_name = changes.kernel_name
        and ref_to.kernel_provider = changes.kernel_provider
        and ref_to.kernel_operation_mode = changes.kernel_operation_mode
        and ref_to.metric_name = changes.metric_name
        and ref_to.gpu_name = changes.gpu_name
        and ref_to.x_name is not distinct from changes.x_name
        and ref_to.x_value is not distinct from changes.x_value
        and ref_to.extra_config is not distinct from changes.extra_config
        and ref_to.version_rank = changes.to_version_rank
        and ref_to.reference_provider = ref_from.reference_provider
    group by
        changes.kernel_name, changes.kernel_provider, changes.kernel_operation_mode,
        changes.metric_name, changes.gpu_name, changes.x_name, changes.x_value,
        changes.extra_config, changes.from_version_rank, changes.to_version_rank
),

with_reference as (
    select
        with_threshold.*,
        reference_pairs.reference_providers,
        coalesce(reference_pairs.reference_count, 0) as reference_count,
        reference_pairs.reference_from_p50,
        reference_pairs.reference_to_p50,
        reference_pairs.reference_ratio,
        with_threshold.ratio / reference_pairs.reference_ratio as normalized_ratio
    from with_threshold
    left join reference_pairs
        on reference_pairs.kernel_name = with_threshold.kernel_name
        and reference_pairs.kernel_provider = with_threshold.kernel_provider
        and reference_pairs.kernel_operation_mode = with_threshold.kernel_operation_mode
        and reference_pairs.metric_name = with_threshold.metric_name
        and reference_pairs.gpu_name = with_threshold.gpu_name
        and reference_pairs.x_name is not distinct from with_threshold.x_name
        and reference_pairs.x_value is not distinct from with_threshold.x_value
        and reference_pairs.extra_config is not distinct from with_threshold.extra_config
        and reference_pairs.from_version_rank = with_threshold.from_version_rank
        and reference_pairs.to_version_rank = with_threshold.to_version_rank
),

tests as (
    select
        with_reference.*,
        ln(normalized_ratio) as log_normalized_ratio,
        abs(log_ratio) > threshold_log as raw_beyond_noise,
        abs(ln(normalized_ratio)) > threshold_log as normalized_beyond_noise,
        normalized_ratio is not null
            and abs(ln(normalized_ratio)) > threshold_log
            and sign(ln(normalized_ratio)) = sign(log_ratio) as reference_confirms,
        settings.require_band_separation as require_band_separation
    from with_reference
    cross join settings
),

judged as (
    select
        *,
        case
            when ratio is null then 'insufficient'
            when not raw_beyond_noise then 'unchanged'
            when normalized_ratio is not null and not reference_confirms then 'drift'
            when require_band_separation and not bands_separated then 'unchanged'
            when log_ratio > 0 then 'regression'
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
    ratio,
    log_ratio,
    direction,
    bands_separated,
    reference_providers,
    reference_count,
    reference_from_p50,
    reference_to_p50,
    reference_ratio,
    normalized_ratio,
    log_normalized_ratio,
    threshold,
    threshold_log,
    noise_scope,
    raw_beyond_noise,
    reference_confirms,
    verdict,
    case
        when ratio is null then 'missing or non-positive p50 at one of the versions'
        when verdict = 'unchanged' and not raw_beyond_noise and normalized_beyond_noise
            then printf(
                'x%.3f is within noise (+-%.1f%%); the reference (%s) moved x%.3f',
                ratio, 100 * threshold, reference_providers, reference_ratio
            )
        when verdict = 'unchanged' and not raw_beyond_noise
            then printf('x%.3f is within noise (+-%.1f%%)', ratio, 100 * threshold)
        when verdict = 'drift'
            then printf(
                'x%.3f is beyond noise (+-%.1f%%) but the reference (%s) moved x%.3f; '
                || 'normalized x%.3f: the machine moved, not Liger',
                ratio, 100 * threshold, reference_providers, reference_ratio, normalized_ratio
            )
        when verdict = 'unchanged'
            then printf(
                'x%.3f is beyond noise (+-%.1f%%) but the p20-p80 bands overlap',
                ratio, 100 * threshold
            )
        when normalized_ratio is null
            then printf(
                'x%.3f beyond noise (+-%.1f%%), bands separated; no reference measured '
                || 'beside it, raw change only',
                ratio, 100 * threshold
            )
        else printf(
            'x%.3f beyond noise (+-%.1f%%), bands separated; x%.3f relative to %s',
            ratio, 100 * threshold, normalized_ratio, reference_providers
        )
    end as reason
from judged
