/* MODEL
name: noise_floor
materialized: table
depends_on: [regression_settings, series_versions]
*/
-- noise_floor: how far the p50 moves when the same version is simply run again.
--
-- The unit is a re-run sweep: a sweep (series without x_value) measured more
-- than once at one version. Its noise is the `noise_quantile` of its points'
-- within-version spreads ln(p50_max / p50_min) (series_versions.spread_log),
-- interpolated like quantile_cont over the sorted spreads.
-- Rows, by scope:
--   'group'   per kernel_name, kernel_provider, kernel_operation_mode,
--             metric_name, gpu_name with re-runs: the MEDIAN over its re-run
--             sweeps. `trusted` when it rests on at least min_rerun_sweeps of
--             them; only a trusted group uses its own noise. One run can
--             therefore never set a threshold: with fewer re-run sweeps the
--             group borrows the pooled noise below.
--   'metric'  per metric_name: the median over every re-run sweep of that
--             metric (the pooled estimate);
--   'overall' the median over every re-run sweep (always present; with no
--             re-runs at all the noise is 0 and the floor applies).
-- threshold = greatest(min_noise_floor, noise_multiplier * noise) is the
-- relative change a verdict must exceed; threshold_log = ln(1 + threshold).
-- A version whose own runs spread beyond that threshold makes its pairs
-- `unstable` (see verdicts): the outlier run is not silenced, it is named.
with rerun_points as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        version_rank,
        spread_log,
        row_number() over rerun_sweep as spread_order,
        count(*) over (
            partition by
                kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, extra_config, version_rank
        ) as sweep_points
    from series_versions
    where runs > 1
    window rerun_sweep as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, extra_config, version_rank
        order by spread_log, x_value
    )
),

quantile_positions as (
    select
        rerun_points.*,
        1 + regression_settings.noise_quantile * (sweep_points - 1) as position
    from rerun_points
    cross join regression_settings
),

rerun_sweeps as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        count(*) as rerun_points,
        median(spread_log) as median_log,
        max(case when spread_order = floor(position) then spread_log end)
        + max(position - floor(position))
        * (
            max(case when spread_order = ceil(position) then spread_log end)
            - max(case when spread_order = floor(position) then spread_log end)
        ) as noise_log
    from quantile_positions
    group by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, version_rank
),

group_rows as (
    select
        'group' as scope,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        sum(rerun_points) as rerun_points,
        count(*) as rerun_sweeps,
        median(median_log) as median_log,
        median(noise_log) as noise_log
    from rerun_sweeps
    group by kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name
),

metric_rows as (
    select
        'metric' as scope,
        cast(null as varchar) as kernel_name,
        cast(null as varchar) as kernel_provider,
        cast(null as varchar) as kernel_operation_mode,
        metric_name,
        cast(null as varchar) as gpu_name,
        sum(rerun_points) as rerun_points,
        count(*) as rerun_sweeps,
        median(median_log) as median_log,
        median(noise_log) as noise_log
    from rerun_sweeps
    group by metric_name
),

overall_row as (
    select
        'overall' as scope,
        cast(null as varchar) as kernel_name,
        cast(null as varchar) as kernel_provider,
        cast(null as varchar) as kernel_operation_mode,
        cast(null as varchar) as metric_name,
        cast(null as varchar) as gpu_name,
        coalesce(sum(rerun_points), 0) as rerun_points,
        count(*) as rerun_sweeps,
        coalesce(median(median_log), 0) as median_log,
        coalesce(median(noise_log), 0) as noise_log
    from rerun_sweeps
),

all_rows as (
    select * from group_rows
    union all
    select * from metric_rows
    union all
    select * from overall_row
),

thresholds as (
    select
        all_rows.*,
        exp(all_rows.median_log) - 1 as median_rel_spread,
        exp(all_rows.noise_log) - 1 as noise_rel_spread,
        greatest(
            regression_settings.min_noise_floor,
            regression_settings.noise_multiplier * (exp(all_rows.noise_log) - 1)
        ) as threshold,
        regression_settings.noise_multiplier * (exp(all_rows.noise_log) - 1)
        < regression_settings.min_noise_floor as floor_applied,
        all_rows.scope <> 'group'
        or all_rows.rerun_sweeps >= regression_settings.min_rerun_sweeps as trusted
    from all_rows
    cross join regression_settings
)

select
    scope,
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    gpu_name,
    cast(rerun_points as bigint) as rerun_points,
    cast(rerun_sweeps as bigint) as rerun_sweeps,
    trusted,
    median_rel_spread,
    noise_rel_spread,
    threshold,
    ln(1 + threshold) as threshold_log,
    floor_applied
from thresholds
