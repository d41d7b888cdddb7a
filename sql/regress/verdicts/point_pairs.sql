/* MODEL
name: point_pairs
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, to_step_rank]
depends_on: [noise_judged, point_evidence, regression_settings]
*/
-- point_pairs: the evidence for one liger-family series and pair of consecutive steps, on both
-- axes (versions, benchmarked commits), with the noise threshold it is judged against.
--
-- The rows of `point_evidence` (kept per series, refreshed for the series a snapshot touches),
-- plus:
--   threshold        the noise threshold (noise_judged: noise_floor as its pairs were judged) measured
--                    on the point's GPU for its metric:
--                    at its duration when that bucket is trusted (enough re-run sweeps), else
--                    over all durations of that GPU and metric when trusted, else the default
--                    of regression_settings (never another GPU's re-runs);
--   noise_scope      'bucket' | 'gpu' | 'default': which of the three;
--   threshold_source where it came from, in words (the reasons quote it);
--   threshold_log    ln(1 + threshold);
--   min_detectable_change  the smallest relative change this pair could tell from noise.
-- A view: joining the few noise rows costs less than writing the pairs again.
-- Judged in `verdicts` (the one place of the verdict rule).
with with_threshold as (
    select
        point_evidence.*,
        case
            when bucket_noise.scope is not null then 'bucket'
            when gpu_noise.scope is not null then 'gpu'
            else 'default'
        end as noise_scope,
        coalesce(
            bucket_noise.threshold,
            gpu_noise.threshold,
            case
                when point_evidence.metric_name = 'memory'
                    then regression_settings.default_memory_threshold
                else regression_settings.default_noise_threshold
            end
        ) as threshold,
        coalesce(
            bucket_noise.threshold_source,
            gpu_noise.threshold_source,
            'default of regression_settings: '
            || cast(coalesce(any_noise.rerun_sweeps, 0) as varchar) || ' re-run sweeps of '
            || point_evidence.metric_name || ' on ' || point_evidence.gpu_name || ', '
            || cast(regression_settings.min_rerun_sweeps as varchar) || ' needed'
        ) as threshold_source
    from point_evidence
    cross join regression_settings
    left join noise_judged as bucket_noise
        on bucket_noise.scope = 'bucket'
        and bucket_noise.trusted
        and bucket_noise.gpu_name = point_evidence.gpu_name
        and bucket_noise.metric_name = point_evidence.metric_name
        and bucket_noise.duration_bucket = point_evidence.duration_bucket
    left join noise_judged as gpu_noise
        on gpu_noise.scope = 'gpu'
        and gpu_noise.trusted
        and gpu_noise.gpu_name = point_evidence.gpu_name
        and gpu_noise.metric_name = point_evidence.metric_name
    left join noise_judged as any_noise
        on any_noise.scope = 'gpu'
        and any_noise.gpu_name = point_evidence.gpu_name
        and any_noise.metric_name = point_evidence.metric_name
)

select
    with_threshold.*,
    ln(1 + with_threshold.threshold) as threshold_log,
    with_threshold.threshold as min_detectable_change
from with_threshold
