/* MODEL
name: sweep_versions
depends_on: [series_versions]
*/
-- sweep_versions: one row per liger-family sweep and version, with the version it follows.
--
-- A sweep is a series without x_value: kernel_name, kernel_provider,
-- kernel_operation_mode, metric_name, gpu_name, x_name, extra_config.
-- from_version is the previous version this sweep was measured at (PEP 440
-- order), NULL for its first version. runs is the most runs any of its points
-- had at this version. Read by sweep_pairs (the pairs to judge) and
-- version_coverage (which versions were judged, and why not).
with per_version as (
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
        max(metric_unit) as metric_unit,
        max(runs) as runs,
        count(*) as points
    from series_versions
    where is_liger
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, version_rank
)

select
    *,
    lag(liger_version) over sweep_order as from_version,
    lag(version_rank) over sweep_order as from_version_rank,
    lag(runs) over sweep_order as from_runs
from per_version
window sweep_order as (
    partition by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config
    order by version_rank
)
