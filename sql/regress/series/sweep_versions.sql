/* MODEL
name: sweep_versions
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, version_rank]
depends_on: [sweep_steps]
*/
-- sweep_versions: one row per liger-family sweep and version, with the version it follows
-- (the version axis of sweep_steps). runs is the most runs any of its points had at this
-- version; alias_provider / from_alias_provider the provider name as measured when a reviewed
-- rename keyed it.
select
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    gpu_name,
    x_name,
    extra_config,
    version_rank,
    liger_version,
    metric_unit,
    runs,
    points,
    alias_provider,
    from_version,
    from_version_rank,
    from_alias_provider,
    from_runs
from sweep_steps
where axis = 'version'
