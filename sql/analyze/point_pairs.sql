/* MODEL
name: point_pairs
materialized: table
depends_on: [noise_floor, reference_measurements, regression_settings, step_changes]
*/
-- point_pairs: the evidence for one liger-family series and pair of consecutive steps, on both
-- axes (versions, benchmarked commits).
--
-- The liger-family rows of `step_changes`, plus:
--   duration_bucket  the point's duration (the faster side's p50) in decades of ms (speed only)
--   threshold        the noise threshold (noise_floor) measured on the point's GPU for its metric:
--                    at its duration when that bucket is trusted (enough re-run sweeps), else
--                    over all durations of that GPU and metric when trusted, else the default
--                    of regression_settings (never another GPU's re-runs);
--   noise_scope      'bucket' | 'gpu' | 'default': which of the three;
--   threshold_source where it came from, in words (the reasons quote it);
--   min_detectable_change  the smallest relative change this pair could tell from noise;
--   reference_ratio  geometric mean, over the non-liger providers measured
--                    beside liger at BOTH steps, of ref_to / ref_from;
--   normalized_ratio ratio / reference_ratio
--                    (= (liger_to / ref_to) / (liger_from / ref_from)).
-- Judged in `verdicts` (the one place of the verdict rule).
with liger_changes as (
    select
        step_changes.*,
        case
            when metric_name = 'speed' then cast(floor(log10(least(from_p50, to_p50))) as integer)
            else 0
        end as duration_bucket
    from step_changes
    where is_liger
),

with_threshold as (
    select
        liger_changes.*,
        case
            when bucket_noise.scope is not null then 'bucket'
            when gpu_noise.scope is not null then 'gpu'
            else 'default'
        end as noise_scope,
        coalesce(
            bucket_noise.threshold,
            gpu_noise.threshold,
            case
                when liger_changes.metric_name = 'memory'
                    then regression_settings.default_memory_threshold
                else regression_settings.default_noise_threshold
            end
        ) as threshold,
        coalesce(
            bucket_noise.threshold_source,
            gpu_noise.threshold_source,
            'default of regression_settings: '
            || cast(coalesce(any_noise.rerun_sweeps, 0) as varchar) || ' re-run sweeps of '
            || liger_changes.metric_name || ' on ' || liger_changes.gpu_name || ', '
            || cast(regression_settings.min_rerun_sweeps as varchar) || ' needed'
        ) as threshold_source
    from liger_changes
    cross join regression_settings
    left join noise_floor as bucket_noise
        on bucket_noise.scope = 'bucket'
        and bucket_noise.trusted
        and bucket_noise.gpu_name = liger_changes.gpu_name
        and bucket_noise.metric_name = liger_changes.metric_name
        and bucket_noise.duration_bucket = liger_changes.duration_bucket
    left join noise_floor as gpu_noise
        on gpu_noise.scope = 'gpu'
        and gpu_noise.trusted
        and gpu_noise.gpu_name = liger_changes.gpu_name
        and gpu_noise.metric_name = liger_changes.metric_name
    left join noise_floor as any_noise
        on any_noise.scope = 'gpu'
        and any_noise.gpu_name = liger_changes.gpu_name
        and any_noise.metric_name = liger_changes.metric_name
),

reference_pairs as (
    select
        liger_changes.axis,
        liger_changes.kernel_name,
        liger_changes.kernel_provider,
        liger_changes.kernel_operation_mode,
        liger_changes.metric_name,
        liger_changes.gpu_name,
        liger_changes.x_name,
        liger_changes.x_value,
        liger_changes.extra_config,
        liger_changes.from_step_rank,
        liger_changes.to_step_rank,
        string_agg(ref_from.reference_provider, ',' order by ref_from.reference_provider)
            as reference_providers,
        count(*) as reference_count,
        exp(avg(ln(ref_to.reference_p50 / ref_from.reference_p50))) as reference_ratio
    from liger_changes
    inner join reference_measurements as ref_from
        on ref_from.axis = liger_changes.axis
        and ref_from.kernel_name = liger_changes.kernel_name
        and ref_from.kernel_provider = liger_changes.kernel_provider
        and ref_from.kernel_operation_mode = liger_changes.kernel_operation_mode
        and ref_from.metric_name = liger_changes.metric_name
        and ref_from.gpu_name = liger_changes.gpu_name
        and ref_from.x_name is not distinct from liger_changes.x_name
        and ref_from.x_value is not distinct from liger_changes.x_value
        and ref_from.extra_config is not distinct from liger_changes.extra_config
        and ref_from.step_rank = liger_changes.from_step_rank
    inner join reference_measurements as ref_to
        on ref_to.axis = liger_changes.axis
        and ref_to.kernel_name = liger_changes.kernel_name
        and ref_to.kernel_provider = liger_changes.kernel_provider
        and ref_to.kernel_operation_mode = liger_changes.kernel_operation_mode
        and ref_to.metric_name = liger_changes.metric_name
        and ref_to.gpu_name = liger_changes.gpu_name
        and ref_to.x_name is not distinct from liger_changes.x_name
        and ref_to.x_value is not distinct from liger_changes.x_value
        and ref_to.extra_config is not distinct from liger_changes.extra_config
        and ref_to.step_rank = liger_changes.to_step_rank
        and ref_to.reference_provider = ref_from.reference_provider
    group by
        liger_changes.axis, liger_changes.kernel_name, liger_changes.kernel_provider,
        liger_changes.kernel_operation_mode, liger_changes.metric_name,
        liger_changes.gpu_name, liger_changes.x_name, liger_changes.x_value,
        liger_changes.extra_config, liger_changes.from_step_rank,
        liger_changes.to_step_rank
)

select
    with_threshold.*,
    ln(1 + with_threshold.threshold) as threshold_log,
    with_threshold.threshold as min_detectable_change,
    reference_pairs.reference_providers,
    coalesce(reference_pairs.reference_count, 0) as reference_count,
    reference_pairs.reference_ratio,
    with_threshold.ratio / reference_pairs.reference_ratio as normalized_ratio
from with_threshold
left join reference_pairs
    on reference_pairs.axis = with_threshold.axis
    and reference_pairs.kernel_name = with_threshold.kernel_name
    and reference_pairs.kernel_provider = with_threshold.kernel_provider
    and reference_pairs.kernel_operation_mode = with_threshold.kernel_operation_mode
    and reference_pairs.metric_name = with_threshold.metric_name
    and reference_pairs.gpu_name = with_threshold.gpu_name
    and reference_pairs.x_name is not distinct from with_threshold.x_name
    and reference_pairs.x_value is not distinct from with_threshold.x_value
    and reference_pairs.extra_config is not distinct from with_threshold.extra_config
    and reference_pairs.from_step_rank = with_threshold.from_step_rank
    and reference_pairs.to_step_rank = with_threshold.to_step_rank
