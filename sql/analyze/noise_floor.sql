/* MODEL
name: noise_floor
materialized: table
depends_on: [commit_ranges, regression_settings, series_steps, step_changes]
*/
-- noise_floor: how far the p50 moves when the same code is simply run again, per GPU, metric and
-- duration -- the threshold a change must exceed.
--
-- Re-runs (each a "re-run sweep": one sweep, measured again):
--   'same commit'     a commit benchmarked more than once (commit axis, runs > 1): the spread
--                     ln(p50_max / p50_min) of each point;
--   'no kernel change' two consecutive snapshots of a sweep with no commit touching
--                     src/liger_kernel/ between them (benchmark_commit.kernel_changed = false
--                     for every benchmarked commit in the range): |ln ratio| of each point;
--   'same version'    a version measured more than once in the CSVs when none of its runs has a
--                     known benchmarked commit (runs of one version at different commits are
--                     not re-runs: the code changed between them).
-- Every provider's re-runs count (torch re-run on the same machine is machine noise too).
-- duration_bucket: speed points by their p50 in decades of ms (floor(log10 p50): -2 is
-- 0.01-0.1 ms, launch-bound; 1 is 10-100 ms); other metrics one bucket (0).
-- A re-run sweep's noise in a bucket is the noise_quantile of its points' moves there
-- (interpolated like quantile_cont). Rows:
--   scope 'bucket'  per gpu_name, metric_name, duration_bucket: the MEDIAN over its re-run sweeps;
--   scope 'gpu'     per gpu_name, metric_name: the median over its re-run sweeps of every bucket.
-- A row is `trusted` with at least min_rerun_sweeps re-run sweeps, so no single run (a cold one
-- or an unusually quiet one) sets a threshold; the pair views use the bucket when trusted, else
-- the GPU's, else the default of regression_settings (default_noise_threshold, or
-- default_memory_threshold for memory) and say so (threshold_source).
-- Nothing is pooled across GPUs: re-runs on one GPU never move another GPU's thresholds.
-- threshold = greatest(floor, noise_multiplier * noise), floor = min_noise_floor, or
-- memory_min_noise_floor for memory (Liger's harness measures memory exactly: re-runs repeat the
-- same MB, so a memory step that re-runs reproduce is real even when small).
with rerun_moves as (
    select
        'same commit' as rerun_kind,
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, x_value,
        step_rank as unit_rank,
        spread_log as move_log,
        p50
    from series_steps
    where axis = 'commit' and runs > 1

    union all

    select
        'same version' as rerun_kind,
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, x_value,
        step_rank as unit_rank,
        spread_log as move_log,
        p50
    from series_steps
    where axis = 'version' and runs > 1 and step_commits = 0

    union all

    select
        'no kernel change' as rerun_kind,
        step_changes.kernel_name, step_changes.kernel_provider, step_changes.kernel_operation_mode,
        step_changes.metric_name, step_changes.gpu_name, step_changes.x_name,
        step_changes.extra_config, step_changes.x_value,
        step_changes.to_step_rank as unit_rank,
        abs(step_changes.log_ratio) as move_log,
        least(step_changes.from_p50, step_changes.to_p50) as p50
    from step_changes
    inner join commit_ranges as range_from
        on range_from.commit_order = step_changes.from_step_rank
    inner join commit_ranges as range_to
        on range_to.commit_order = step_changes.to_step_rank
    where step_changes.axis = 'commit'
        and range_to.kernel_changes_through = range_from.kernel_changes_through
),

bucketed as (
    select
        rerun_moves.*,
        case
            when metric_name = 'speed' then cast(floor(log10(p50)) as integer)
            else 0
        end as duration_bucket
    from rerun_moves
),

ordered as (
    select
        bucketed.*,
        row_number() over (
            partition by
                rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, extra_config, unit_rank, duration_bucket
            order by move_log, x_value
        ) as move_order,
        count(*) over (
            partition by
                rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
                gpu_name, x_name, extra_config, unit_rank, duration_bucket
        ) as unit_points
    from bucketed
),

positioned as (
    select
        ordered.*,
        1 + regression_settings.noise_quantile * (unit_points - 1) as position
    from ordered
    cross join regression_settings
),

rerun_sweeps as (
    select
        rerun_kind,
        gpu_name,
        metric_name,
        duration_bucket,
        concat_ws(
            '|', rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, x_name,
            extra_config, cast(unit_rank as varchar)
        ) as unit_id,
        count(*) as rerun_points,
        median(move_log) as median_log,
        max(case when move_order = floor(position) then move_log end)
        + max(position - floor(position))
        * (
            max(case when move_order = ceil(position) then move_log end)
            - max(case when move_order = floor(position) then move_log end)
        ) as noise_log
    from positioned
    group by
        rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, extra_config, unit_rank, duration_bucket
),

bucket_rows as (
    select
        'bucket' as scope,
        gpu_name,
        metric_name,
        duration_bucket,
        sum(rerun_points) as rerun_points,
        count(*) as rerun_sweeps,
        count(case when rerun_kind = 'same commit' then 1 end) as same_commit_sweeps,
        count(case when rerun_kind = 'no kernel change' then 1 end) as no_kernel_change_sweeps,
        count(case when rerun_kind = 'same version' then 1 end) as same_version_sweeps,
        median(median_log) as median_log,
        median(noise_log) as noise_log
    from rerun_sweeps
    group by gpu_name, metric_name, duration_bucket
),

gpu_rows as (
    select
        'gpu' as scope,
        gpu_name,
        metric_name,
        cast(null as integer) as duration_bucket,
        sum(rerun_points) as rerun_points,
        count(distinct unit_id) as rerun_sweeps,
        count(distinct case when rerun_kind = 'same commit' then unit_id end) as same_commit_sweeps,
        count(distinct case when rerun_kind = 'no kernel change' then unit_id end)
            as no_kernel_change_sweeps,
        count(distinct case when rerun_kind = 'same version' then unit_id end) as same_version_sweeps,
        median(median_log) as median_log,
        median(noise_log) as noise_log
    from rerun_sweeps
    group by gpu_name, metric_name
),

all_rows as (
    select * from bucket_rows
    union all
    select * from gpu_rows
),

thresholds as (
    select
        all_rows.*,
        case
            when all_rows.metric_name = 'memory' then regression_settings.memory_min_noise_floor
            else regression_settings.min_noise_floor
        end as noise_floor_min,
        regression_settings.noise_multiplier,
        all_rows.rerun_sweeps >= regression_settings.min_rerun_sweeps as trusted
    from all_rows
    cross join regression_settings
),

described as (
    select
        thresholds.*,
        greatest(noise_floor_min, noise_multiplier * (exp(noise_log) - 1)) as threshold,
        noise_multiplier * (exp(noise_log) - 1) < noise_floor_min as floor_applied,
        case
            when scope = 'gpu' then 'all durations'
            when metric_name <> 'speed' then 'all sizes'
            when duration_bucket < -3 then 'under 0.001 ms'
            when duration_bucket = -3 then '1-10 us'
            when duration_bucket = -2 then '10-100 us'
            when duration_bucket = -1 then '0.1-1 ms'
            when duration_bucket = 0 then '1-10 ms'
            when duration_bucket = 1 then '10-100 ms'
            when duration_bucket = 2 then '0.1-1 s'
            else 'over 1 s'
        end as duration_label
    from thresholds
)

select
    scope,
    cast(null as varchar) as kernel_name,
    cast(null as varchar) as kernel_provider,
    cast(null as varchar) as kernel_operation_mode,
    metric_name,
    gpu_name,
    duration_bucket,
    duration_label,
    cast(rerun_points as bigint) as rerun_points,
    cast(rerun_sweeps as bigint) as rerun_sweeps,
    cast(same_commit_sweeps as bigint) as same_commit_sweeps,
    cast(no_kernel_change_sweeps as bigint) as no_kernel_change_sweeps,
    cast(same_version_sweeps as bigint) as same_version_sweeps,
    trusted,
    exp(median_log) - 1 as median_rel_spread,
    exp(noise_log) - 1 as noise_rel_spread,
    threshold,
    ln(1 + threshold) as threshold_log,
    floor_applied,
    'measured: ' || cast(rerun_sweeps as varchar) || ' re-run sweeps of ' || metric_name
    || ' on ' || gpu_name || ', ' || duration_label
    || ' (' || concat_ws(
        ', ',
        case when same_commit_sweeps > 0 then cast(same_commit_sweeps as varchar) || ' same commit' end,
        case
            when no_kernel_change_sweeps > 0
                then cast(no_kernel_change_sweeps as varchar) || ' no kernel change'
        end,
        case when same_version_sweeps > 0 then cast(same_version_sweeps as varchar) || ' same version' end
    ) || ')' as threshold_source
from described
