-- series_versions: one row per series and version -- the measurement that is compared.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- A series is kernel_name, kernel_provider, kernel_operation_mode, metric_name,
-- gpu_name, x_name, x_value, extra_config. Where a version was measured more
-- than once, the latest run (by observed_at) is kept here; the earlier runs
-- feed the noise estimate in `noise_floor`. Versions without a PEP 440 rank
-- are dropped (they sort nowhere).
create or replace view series_versions as
with source as (
    select
        measurements.*,
        version_order.version_rank
    from measurements
    inner join liger_version_order as version_order
        on version_order.liger_version = measurements.liger_version
    where version_order.version_rank is not null
        and measurements.p50 is not null
),

ranked as (
    select
        *,
        count(*) over series_version as runs_at_version,
        row_number() over (
            partition by
                kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, x_value, extra_config, version_rank
            order by observed_at desc nulls last, measurement_digest desc
        ) as run_recency
    from source
    window series_version as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config, version_rank
    )
)

select
    kernel_name,
    kernel_provider,
    starts_with(kernel_provider, 'liger') as is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    try_cast(x_value as double) as x_numeric,
    extra_config,
    liger_version,
    version_rank,
    observed_at,
    p20,
    p50,
    p80,
    runs_at_version,
    measurement_digest
from ranked
where run_recency = 1
