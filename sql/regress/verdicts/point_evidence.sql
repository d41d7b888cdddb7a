/* MODEL
name: point_evidence
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config, axis]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, to_step_rank]
chain: {steps: series_steps, within: [kernel_provider]}
depends_on: [point_references, step_changes]
*/
-- point_evidence: what one liger-family series' pair of consecutive steps shows, on both axes
-- (versions, benchmarked commits), before any noise threshold: the series' own rows, so a new
-- snapshot refreshes only the series it touched. `point_pairs` adds the thresholds.
--
-- The liger-family rows of `step_changes`, plus:
--   duration_bucket  the point's duration (the faster side's p50) in decades of ms (speed only)
--   reference_ratio  geometric mean, over the non-liger providers measured
--                    beside liger at BOTH steps, of ref_to / ref_from (point_references);
--   normalized_ratio ratio / reference_ratio
--                    (= (liger_to / ref_to) / (liger_from / ref_from)).
with liger_changes as (
    select
        step_changes.*,
        case
            when metric_name = 'speed' then cast(floor(log10(least(from_p50, to_p50))) as integer)
            else 0
        end as duration_bucket
    from step_changes
    where is_liger
)

select
    liger_changes.*,
    reference_pairs.reference_providers,
    coalesce(reference_pairs.reference_count, 0) as reference_count,
    reference_pairs.reference_ratio,
    liger_changes.ratio / reference_pairs.reference_ratio as normalized_ratio
from liger_changes
left join point_references as reference_pairs
    on reference_pairs.axis = liger_changes.axis
    and reference_pairs.kernel_name = liger_changes.kernel_name
    and reference_pairs.kernel_provider = liger_changes.kernel_provider
    and reference_pairs.kernel_operation_mode = liger_changes.kernel_operation_mode
    and reference_pairs.metric_name = liger_changes.metric_name
    and reference_pairs.gpu_name = liger_changes.gpu_name
    and reference_pairs.x_name is not distinct from liger_changes.x_name
    and reference_pairs.x_value is not distinct from liger_changes.x_value
    and reference_pairs.extra_config is not distinct from liger_changes.extra_config
    and reference_pairs.from_step_rank = liger_changes.from_step_rank
    and reference_pairs.to_step_rank = liger_changes.to_step_rank
