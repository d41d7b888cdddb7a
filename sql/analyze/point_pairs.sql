/* MODEL
name: point_pairs
materialized: table
depends_on: [noise_floor, reference_measurements, version_changes]
*/
-- point_pairs: the evidence for one liger-family series and consecutive version pair.
--
-- The liger-family rows of `version_changes`, plus:
--   threshold        the noise threshold of the series' kernel/provider/mode/
--                    metric/GPU group (noise_floor): the group's own when it is
--                    trusted (enough re-run sweeps), else the pooled one of its
--                    metric, else the overall one (noise_scope says which);
--   reference_ratio  geometric mean, over the non-liger providers measured
--                    beside liger at BOTH versions, of ref_to / ref_from;
--   normalized_ratio ratio / reference_ratio
--                    (= (liger_to / ref_to) / (liger_from / ref_from)).
-- Judged in `verdicts` (the one place of the verdict rule).
with liger_changes as (
    select * from version_changes where is_liger
),

with_threshold as (
    select
        liger_changes.*,
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
    from liger_changes
    left join noise_floor as group_noise
        on group_noise.scope = 'group'
        and group_noise.trusted
        and group_noise.kernel_name = liger_changes.kernel_name
        and group_noise.kernel_provider = liger_changes.kernel_provider
        and group_noise.kernel_operation_mode = liger_changes.kernel_operation_mode
        and group_noise.metric_name = liger_changes.metric_name
        and group_noise.gpu_name = liger_changes.gpu_name
    left join noise_floor as metric_noise
        on metric_noise.scope = 'metric'
        and metric_noise.metric_name = liger_changes.metric_name
    cross join (select * from noise_floor where scope = 'overall') as overall_noise
),

reference_pairs as (
    select
        liger_changes.kernel_name,
        liger_changes.kernel_provider,
        liger_changes.kernel_operation_mode,
        liger_changes.metric_name,
        liger_changes.gpu_name,
        liger_changes.x_name,
        liger_changes.x_value,
        liger_changes.extra_config,
        liger_changes.from_version_rank,
        liger_changes.to_version_rank,
        string_agg(ref_from.reference_provider, ',' order by ref_from.reference_provider)
            as reference_providers,
        count(*) as reference_count,
        exp(avg(ln(ref_to.reference_p50 / ref_from.reference_p50))) as reference_ratio
    from liger_changes
    inner join reference_measurements as ref_from
        on ref_from.kernel_name = liger_changes.kernel_name
        and ref_from.kernel_provider = liger_changes.kernel_provider
        and ref_from.kernel_operation_mode = liger_changes.kernel_operation_mode
        and ref_from.metric_name = liger_changes.metric_name
        and ref_from.gpu_name = liger_changes.gpu_name
        and ref_from.x_name is not distinct from liger_changes.x_name
        and ref_from.x_value is not distinct from liger_changes.x_value
        and ref_from.extra_config is not distinct from liger_changes.extra_config
        and ref_from.version_rank = liger_changes.from_version_rank
    inner join reference_measurements as ref_to
        on ref_to.kernel_name = liger_changes.kernel_name
        and ref_to.kernel_provider = liger_changes.kernel_provider
        and ref_to.kernel_operation_mode = liger_changes.kernel_operation_mode
        and ref_to.metric_name = liger_changes.metric_name
        and ref_to.gpu_name = liger_changes.gpu_name
        and ref_to.x_name is not distinct from liger_changes.x_name
        and ref_to.x_value is not distinct from liger_changes.x_value
        and ref_to.extra_config is not distinct from liger_changes.extra_config
        and ref_to.version_rank = liger_changes.to_version_rank
        and ref_to.reference_provider = ref_from.reference_provider
    group by
        liger_changes.kernel_name, liger_changes.kernel_provider,
        liger_changes.kernel_operation_mode, liger_changes.metric_name,
        liger_changes.gpu_name, liger_changes.x_name, liger_changes.x_value,
        liger_changes.extra_config, liger_changes.from_version_rank,
        liger_changes.to_version_rank
)

select
    with_threshold.*,
    reference_pairs.reference_providers,
    coalesce(reference_pairs.reference_count, 0) as reference_count,
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
