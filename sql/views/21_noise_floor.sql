-- noise_floor: how far the p50 moves when the same version is simply run again.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- For every series measured more than once at one version, each earlier run is
-- compared with the latest one: spread = |ln(p50_run / p50_latest)|.
-- Rows, by scope:
--   'group'   per kernel_name, kernel_provider, kernel_operation_mode,
--             metric_name, gpu_name that has re-runs;
--   'metric'  per metric_name: the median of the group noises (fallback for
--             groups without re-runs);
--   'overall' the median of all group noises (always present, even with no
--             re-runs at all: then the noise is 0 and the floor applies).
-- noise_log is the `noise_quantile` (regression_settings) of a group's
-- spreads, computed like quantile_cont (DuckDB needs a constant quantile, so
-- it is interpolated over the sorted list by hand).
-- threshold = greatest(min_noise_floor, noise_multiplier * noise) is the
-- relative change a verdict must exceed; threshold_log = ln(1 + threshold).
create or replace view noise_floor as
with settings as (
    select * from regression_settings
),

source as (
    select
        measurements.*,
        version_order.version_rank
    from measurements
    inner join liger_version_order as version_order
        on version_order.liger_version = measurements.liger_version
    where version_order.version_rank is not null
        and measurements.p50 > 0
),

runs as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        p50,
        first_value(p50) over series_version as latest_p50,
        row_number() over series_version as run_recency
    from source
    window series_version as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config, version_rank
        order by observed_at desc nulls last, measurement_digest desc
    )
),

rerun_spreads as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        abs(ln(p50 / latest_p50)) as spread
    from runs
    where run_recency > 1
),

group_spreads as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        count(*) as rerun_points,
        median(spread) as median_log,
        list_sort(list(spread)) as sorted_spreads
    from rerun_spreads
    group by kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name
),

group_noise as (
    select
        group_spreads.*,
        1 + settings.noise_quantile * (len(sorted_spreads) - 1) as quantile_position
    from group_spreads
    cross join settings
),

group_rows as (
    select
        'group' as scope,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        rerun_points,
        1::bigint as rerun_groups,
        median_log,
        sorted_spreads[floor(quantile_position)::integer]
        + (quantile_position - floor(quantile_position))
        * (
            sorted_spreads[ceil(quantile_position)::integer]
            - sorted_spreads[floor(quantile_position)::integer]
        ) as noise_log
    from group_noise
),

metric_rows as (
    select
        'metric' as scope,
        null::varchar as kernel_name,
        null::varchar as kernel_provider,
        null::varchar as kernel_operation_mode,
        metric_name,
        null::varchar as gpu_name,
        sum(rerun_points)::bigint as rerun_points,
        count(*)::bigint as rerun_groups,
        median(median_log) as median_log,
        median(noise_log) as noise_log
    from group_rows
    group by metric_name
),

overall_row as (
    select
        'overall' as scope,
        null::varchar as kernel_name,
        null::varchar as kernel_provider,
        null::varchar as kernel_operation_mode,
        null::varchar as metric_name,
        null::varchar as gpu_name,
        coalesce(sum(rerun_points), 0)::bigint as rerun_points,
        count(*)::bigint as rerun_groups,
        coalesce(median(median_log), 0) as median_log,
        coalesce(median(noise_log), 0) as noise_log
    from group_rows
),

all_rows as (
    select * from group_rows
    union all
    select * from metric_rows
    union all
    select * from overall_row
)

select
    all_rows.scope,
    all_rows.kernel_name,
    all_rows.kernel_provider,
    all_rows.kernel_operation_mode,
    all_rows.metric_name,
    all_rows.gpu_name,
    all_rows.rerun_points,
    all_rows.rerun_groups,
    exp(all_rows.median_log) - 1 as median_rel_spread,
    exp(all_rows.noise_log) - 1 as noise_rel_spread,
    greatest(
        settings.min_noise_floor,
        settings.noise_multiplier * (exp(all_rows.noise_log) - 1)
    ) as threshold,
    ln(1 + greatest(
        settings.min_noise_floor,
        settings.noise_multiplier * (exp(all_rows.noise_log) - 1)
    )) as threshold_log,
    settings.noise_multiplier * (exp(all_rows.noise_log) - 1)
    < settings.min_noise_floor as floor_applied
from all_rows
cross join settings
