/* MODEL
name: point_references
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config, axis]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, to_step_rank]
chain: {steps: series_steps, within: [kernel_provider]}
depends_on: [reference_measurements, step_changes]
*/
-- point_references: per liger-family series and pair of consecutive steps (step_changes), the
-- non-liger providers measured beside it at BOTH steps (reference_measurements):
--   reference_providers  their names, in name order, comma-separated
--   reference_count      how many
--   reference_ratio      the geometric mean of their ref_to / ref_from
-- Kept apart from point_evidence, narrow (the key of a pair and these three): joined in one statement
-- with the wide rows of step_changes, DuckDB guessed this side billions of rows, built its hash
-- table on the wide side and ran out of memory on a deep history; a stored table is counted.
with liger_changes as (
    select
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        x_value, extra_config, from_step_rank, to_step_rank
    from step_changes
    where is_liger
)

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
    -- an exact average, in no thread's order (sweep_pairs says how)
    exp(
        avg(round(ln(ref_to.reference_p50 / ref_from.reference_p50) * 4294967296.0)) / 4294967296.0
    ) as reference_ratio
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
