-- reference_measurements: the non-liger providers measured beside each liger measurement.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- For every liger-family row of `series_versions` (any provider whose name
-- starts with 'liger'), each non-liger provider (torch, huggingface,
-- torch_compile, megatron, deepspeed_tiled, ...) of the same kernel, mode,
-- metric, GPU, x and extra_config at the same version is a reference. Of its
-- runs at that version, the one nearest in time to the liger measurement is
-- taken, and only if it is within reference_max_gap_hours (same machine, same
-- session). `regressions` turns these into a reference ratio per version pair.
create or replace view reference_measurements as
with settings as (
    select * from regression_settings
),

liger_rows as (
    select * from series_versions where is_liger
),

candidates as (
    select
        measurements.*,
        version_order.version_rank
    from measurements
    inner join liger_version_order as version_order
        on version_order.liger_version = measurements.liger_version
    where version_order.version_rank is not null
        and not starts_with(measurements.kernel_provider, 'liger')
        and measurements.p50 > 0
),

matched as (
    select
        liger_rows.kernel_name,
        liger_rows.kernel_provider,
        liger_rows.kernel_operation_mode,
        liger_rows.metric_name,
        liger_rows.gpu_name,
        liger_rows.x_name,
        liger_rows.x_value,
        liger_rows.extra_config,
        liger_rows.liger_version,
        liger_rows.version_rank,
        liger_rows.observed_at as liger_observed_at,
        candidates.kernel_provider as reference_provider,
        candidates.observed_at as reference_observed_at,
        candidates.p20 as reference_p20,
        candidates.p50 as reference_p50,
        candidates.p80 as reference_p80,
        abs(epoch(candidates.observed_at) - epoch(liger_rows.observed_at)) / 3600.0
            as gap_hours
    from liger_rows
    inner join candidates
        on candidates.kernel_name = liger_rows.kernel_name
        and candidates.kernel_operation_mode = liger_rows.kernel_operation_mode
        and candidates.metric_name = liger_rows.metric_name
        and candidates.gpu_name = liger_rows.gpu_name
        and candidates.x_name is not distinct from liger_rows.x_name
        and candidates.x_value is not distinct from liger_rows.x_value
        and candidates.extra_config is not distinct from liger_rows.extra_config
        and candidates.version_rank = liger_rows.version_rank
    cross join settings
    where abs(epoch(candidates.observed_at) - epoch(liger_rows.observed_at)) / 3600.0
        <= settings.reference_max_gap_hours
)

select *
from matched
qualify row_number() over (
    partition by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, version_rank, reference_provider
    -- runs at the same instant tie on time: the values decide, so every engine keeps the same row
    order by gap_hours, reference_observed_at desc, reference_p50, reference_p20, reference_p80
) = 1
