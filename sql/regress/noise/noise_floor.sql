/* MODEL
name: noise_floor
kind: FULL
grain: [metric_name, gpu_name, scope, duration_bucket]
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
--                     for every benchmarked commit in the range), nor changing the benchmark
--                     harness (harness_changed = false; a new script measures differently,
--                     issue 54): |ln ratio| of each point;
--   'same version'    a version measured more than once in the CSVs when none of its runs has a
--                     known benchmarked commit (runs of one version at different commits are
--                     not re-runs: the code changed between them).
-- Every provider's re-runs count (torch re-run on the same machine is machine noise too).
-- duration_bucket: speed points by their p50 in decades of ms (floor(log10 p50): -2 is
-- 0.01-0.1 ms, launch-bound; 1 is 10-100 ms); other metrics one bucket (0).
-- Rows:
--   scope 'bucket'  per gpu_name, metric_name, duration_bucket;
--   scope 'gpu'     per gpu_name, metric_name, every duration.
-- A row's noise is the noise_quantile (interpolated like quantile_cont) of the moves of its
-- re-run points, after leaving out every point of its loudest and of its quietest re-run sweep
-- (when it has more than two): one cold run cannot raise a threshold, one unusually quiet run
-- cannot lower it, and the tail of real re-run noise (launch-bound kernels moving 20 % and more)
-- stays in. A row is `trusted` with at least min_rerun_sweeps re-run sweeps left after that;
-- the pair views use the bucket when trusted, else the GPU's row, else the default of
-- regression_settings (default_noise_threshold, or default_memory_threshold for memory) and say
-- so (threshold_source).
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
        and range_to.harness_changes_through = range_from.harness_changes_through
),

bucketed as (
    select
        rerun_moves.*,
        concat_ws(
            '|', rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, x_name,
            extra_config, cast(unit_rank as varchar)
        ) as unit_id,
        case
            when metric_name = 'speed' then cast(floor(log10(p50)) as integer)
            else 0
        end as duration_bucket
    from rerun_moves
),

-- every move twice: in its duration bucket, and in its GPU's all-durations row (bucket -99)
scoped as (
    select 'bucket' as scope, bucketed.* from bucketed
    union all
    select
        'gpu' as scope,
        rerun_kind, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name,
        x_name, extra_config, x_value, unit_rank, move_log, p50, unit_id,
        -99 as duration_bucket
    from bucketed
),

units as (
    select
        scope,
        gpu_name,
        metric_name,
        duration_bucket,
        unit_id,
        max(rerun_kind) as rerun_kind,
        max(move_log) as unit_max_log
    from scoped
    group by scope, gpu_name, metric_name, duration_bucket, unit_id
),

ranked_units as (
    select
        units.*,
        count(*) over scope_row as units_in_row,
        row_number() over (
            partition by scope, gpu_name, metric_name, duration_bucket
            order by unit_max_log desc, unit_id
        ) as loudness,
        row_number() over (
            partition by scope, gpu_name, metric_name, duration_bucket
            order by unit_max_log, unit_id
        ) as quietness
    from units
    window scope_row as (partition by scope, gpu_name, metric_name, duration_bucket)
),

-- the loudest and the quietest re-run sweep of each row are left out when there are more
-- than two: no single run, cold or unusually quiet, moves a threshold
kept as (
    select scoped.*
    from scoped
    inner join ranked_units
        on ranked_units.scope = scoped.scope
        and ranked_units.gpu_name = scoped.gpu_name
        and ranked_units.metric_name = scoped.metric_name
        and ranked_units.duration_bucket = scoped.duration_bucket
        and ranked_units.unit_id = scoped.unit_id
    where ranked_units.units_in_row <= 2
        or (ranked_units.loudness > 1 and ranked_units.quietness > 1)
),

-- the moves in order: tied moves are equal, so which of them takes a position leaves the
-- quantile as it is (no tie-break on the text columns to sort)
positioned as (
    select
        kept.*,
        row_number() over scope_row as move_order,
        1 + regression_settings.noise_quantile * (count(*) over scope_all - 1) as position
    from kept
    cross join regression_settings
    window
        scope_row as (
            partition by scope, gpu_name, metric_name, duration_bucket
            order by move_log
        ),
        scope_all as (partition by scope, gpu_name, metric_name, duration_bucket)
),

pooled as (
    select
        scope,
        gpu_name,
        metric_name,
        duration_bucket,
        count(*) as kept_points,
        median(move_log) as median_log,
        max(case when move_order = floor(position) then move_log end)
        + max(position - floor(position))
        * (
            max(case when move_order = ceil(position) then move_log end)
            - max(case when move_order = floor(position) then move_log end)
        ) as noise_log
    from positioned
    group by scope, gpu_name, metric_name, duration_bucket
),

unit_counts as (
    select
        scope,
        gpu_name,
        metric_name,
        duration_bucket,
        count(*) as rerun_sweeps,
        count(case when rerun_kind = 'same commit' then 1 end) as same_commit_sweeps,
        count(case when rerun_kind = 'no kernel change' then 1 end) as no_kernel_change_sweeps,
        count(case when rerun_kind = 'same version' then 1 end) as same_version_sweeps
    from units
    group by scope, gpu_name, metric_name, duration_bucket
),

point_counts as (
    select scope, gpu_name, metric_name, duration_bucket, count(*) as rerun_points
    from scoped
    group by scope, gpu_name, metric_name, duration_bucket
),

all_rows as (
    select
        unit_counts.scope,
        unit_counts.gpu_name,
        unit_counts.metric_name,
        case when unit_counts.scope = 'bucket' then unit_counts.duration_bucket end as duration_bucket,
        point_counts.rerun_points,
        unit_counts.rerun_sweeps,
        unit_counts.same_commit_sweeps,
        unit_counts.no_kernel_change_sweeps,
        unit_counts.same_version_sweeps,
        pooled.median_log,
        pooled.noise_log
    from unit_counts
    inner join point_counts
        on point_counts.scope = unit_counts.scope
        and point_counts.gpu_name = unit_counts.gpu_name
        and point_counts.metric_name = unit_counts.metric_name
        and point_counts.duration_bucket = unit_counts.duration_bucket
    inner join pooled
        on pooled.scope = unit_counts.scope
        and pooled.gpu_name = unit_counts.gpu_name
        and pooled.metric_name = unit_counts.metric_name
        and pooled.duration_bucket = unit_counts.duration_bucket
),

thresholds as (
    select
        all_rows.*,
        case
            when all_rows.metric_name = 'memory' then regression_settings.memory_min_noise_floor
            else regression_settings.min_noise_floor
        end as noise_floor_min,
        regression_settings.noise_multiplier,
        all_rows.rerun_sweeps - 2 >= regression_settings.min_rerun_sweeps as trusted
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
