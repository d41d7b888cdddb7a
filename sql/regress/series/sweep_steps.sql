/* MODEL
name: sweep_steps
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, axis]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, axis, step_rank]
chain: {steps: series_steps, within: [kernel_provider], to_step: step_rank}
depends_on: [series_steps]
*/
-- sweep_steps: one row per axis, liger-family sweep and step, with the step it follows.
--
-- A sweep is a series without x_value: kernel_name, kernel_provider,
-- kernel_operation_mode, metric_name, gpu_name, x_name, extra_config.
-- from_step_rank / from_label is the previous step this sweep was measured at on
-- that axis (PEP 440 order of versions, or commit order), NULL for its first.
-- runs is the most runs any of its points had at this step. alias_provider: the
-- provider name as measured when a reviewed rename keyed it (provider_renames).
-- Read by sweep_pairs (the pairs to judge) and version_coverage (which versions
-- were judged, and why not). Stored and kept per step (`chain`): a new run writes the steps it
-- touched and the step after each; computed whole, it was most of version_coverage's cost in every
-- run of a deep warehouse (bench/HISTORY.md).
with per_step as (
    select
        axis,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        step_rank,
        max(step_label) as step_label,
        max(liger_version) as liger_version,
        max(version_rank) as version_rank,
        max(benchmarked_commit) as benchmarked_commit,
        max(release) as release,
        max(alias_provider) as alias_provider,
        max(metric_unit) as metric_unit,
        max(runs) as runs,
        count(*) as points
    from series_steps
    where is_liger
    group by
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, step_rank
)

select
    per_step.*,
    lag(step_label) over sweep_order as from_label,
    lag(step_rank) over sweep_order as from_step_rank,
    lag(liger_version) over sweep_order as from_version,
    lag(version_rank) over sweep_order as from_version_rank,
    lag(benchmarked_commit) over sweep_order as from_commit,
    lag(release) over sweep_order as from_release,
    lag(alias_provider) over sweep_order as from_alias_provider,
    lag(runs) over sweep_order as from_runs
from per_step
window sweep_order as (
    partition by
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config
    order by step_rank
)
