/* MODEL
name: reference_measurements
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config, axis, step_rank]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, step_rank, reference_provider]
depends_on: [ranked_measurements, regression_settings]
*/
-- reference_measurements: the non-liger providers measured beside each liger series and step
-- (a version, or a benchmarked commit: one row per axis).
--
-- For every liger-family run (ranked_measurements, is_liger), each non-liger
-- provider (torch, huggingface, torch_compile, megatron, deepspeed_tiled, ...)
-- of the same kernel, mode, metric, GPU, x and extra_config at the same step
-- is a reference. Of that provider's runs, the one nearest in time to the liger
-- run is taken (ties: the later run, then the smaller digest), and only if it
-- is within reference_max_gap_hours (same machine, same session). Every liger
-- run of the step takes part: reference_p50 is the median over the liger
-- runs of their nearest reference p50. `point_pairs` turns these into a
-- reference ratio per step pair.
-- The pairing is a sort, not a join of runs: each liger run is put once per reference provider
-- measured at its point and step into that provider's timeline, and a window over the timeline
-- takes the last reference run at or before it and the first at or after it (last/first value
-- ignoring nulls), n log n in the runs and portable to Spark. A join of every liger run with every
-- reference run of its step grew with the square of the runs (6 min at 10 M synthetic facts).
with runs as (
    select ranked_measurements.*, epoch(ranked_measurements.observed_at) as observed_s
    from ranked_measurements
),

-- Each timeline (point, step, reference provider) gets a number, so the grouping and the window below
-- sort and group by it, not by ten columns of text (grouping every reference run by the text took
-- 11 s of 26 s at 10 M facts).
reference_providers as (
    select
        *,
        dense_rank() over (
            order by kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value,
                extra_config, axis, step_rank, reference_provider
        ) as timeline_id
    from (
        select distinct
            kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config,
            axis, step_rank, kernel_provider as reference_provider
        from runs
        where not is_liger
    )
),

-- A reference provider's runs at one time are one run: the smallest digest (the tie rule's last
-- step). With no two reference runs of a time left, one order (time, then the reference before a
-- liger run of its own time) serves both windows, so the timeline is sorted once, not twice.
reference_runs as (
    select
        providers.timeline_id,
        runs.observed_s,
        arg_min(cast(runs.p50 as double), runs.measurement_digest) as reference_p50
    from runs
    inner join reference_providers as providers
        on providers.kernel_name = runs.kernel_name
        and providers.kernel_operation_mode = runs.kernel_operation_mode
        and providers.metric_name = runs.metric_name
        and providers.gpu_name = runs.gpu_name
        and providers.x_name is not distinct from runs.x_name
        and providers.x_value is not distinct from runs.x_value
        and providers.extra_config is not distinct from runs.extra_config
        and providers.axis = runs.axis
        and providers.step_rank = runs.step_rank
        and providers.reference_provider = runs.kernel_provider
    where not runs.is_liger
    group by providers.timeline_id, runs.observed_s
),

-- side 1: a liger run (once per reference provider of its point and step); side 0: a reference run.
-- The timeline carries its number, the time and the values the windows and the grouping take, not the
-- point's ten key columns: the window sorts every column it carries (0.35 s instead of 1.3 s at 1 M
-- facts); the key comes back once per timeline at the end.
timeline as (
    select
        providers.timeline_id, runs.kernel_provider, runs.liger_version, runs.observed_s, 1 as side,
        cast(null as double) as reference_s,
        cast(null as double) as reference_p50
    from runs
    inner join reference_providers as providers
        on providers.kernel_name = runs.kernel_name
        and providers.kernel_operation_mode = runs.kernel_operation_mode
        and providers.metric_name = runs.metric_name
        and providers.gpu_name = runs.gpu_name
        and providers.x_name is not distinct from runs.x_name
        and providers.x_value is not distinct from runs.x_value
        and providers.extra_config is not distinct from runs.extra_config
        and providers.axis = runs.axis
        and providers.step_rank = runs.step_rank
    where runs.is_liger
    union all
    select
        timeline_id, cast(null as varchar), cast(null as varchar), observed_s, 0 as side,
        observed_s as reference_s,
        reference_p50
    from reference_runs
),

-- Ties follow one rule: the nearer run, then the later one, then the smaller digest. A reference
-- run at the liger run's own time sorts before it: the run before takes it at a gap of zero, which
-- the run after (strictly later) never beats, so it is chosen, as the rule wants.
neighbours as (
    select
        timeline.*,
        last_value(reference_s ignore nulls) over before_run as before_s,
        last_value(reference_p50 ignore nulls) over before_run as before_p50,
        first_value(reference_s ignore nulls) over after_run as after_s,
        first_value(reference_p50 ignore nulls) over after_run as after_p50
    from timeline
    window
        before_run as (
            partition by timeline_id
            order by observed_s, side
            rows between unbounded preceding and current row
        ),
        after_run as (
            partition by timeline_id
            order by observed_s, side
            rows between current row and unbounded following
        )
),

nearest as (
    select
        neighbours.*,
        -- the later run wins a tie of gaps; with no run on one side, the other
        case
            when before_s is null then true
            when after_s is null then false
            else after_s - observed_s <= observed_s - before_s
        end as after_is_nearer
    from neighbours
    where side = 1
),

paired as (
    select
        nearest.*,
        case when after_is_nearer then after_p50 else before_p50 end as reference_p50_chosen,
        abs(case when after_is_nearer then after_s else before_s end - observed_s) / 3600.0
            as gap_hours
    from nearest
    where before_s is not null or after_s is not null
),

-- The median is the middle run of a window's order (the mean of the two middle runs when their number
-- is even, as median() gives), as in series_steps: a median aggregate per timeline cannot spill, and
-- at 1,000 runs a series it held 2.9 M groups' values and wrote 14 GB to disk (49 of 52 s).
within_gap as (
    select
        paired.timeline_id,
        paired.kernel_provider,
        paired.liger_version,
        paired.gap_hours,
        paired.reference_p50_chosen,
        count(*) over provider_timeline as timeline_runs,
        row_number() over provider_timeline_by_p50 as run_order
    from paired
    cross join regression_settings
    where paired.gap_hours <= regression_settings.reference_max_gap_hours
    window provider_timeline as (partition by paired.timeline_id, paired.kernel_provider),
    provider_timeline_by_p50 as (
        partition by paired.timeline_id, paired.kernel_provider order by paired.reference_p50_chosen
    )
),

-- per liger provider and timeline (a timeline is one point, step and reference provider)
matched as (
    select
        timeline_id,
        kernel_provider,
        max(liger_version) as liger_version,
        count(*) as matched_runs,
        avg(reference_p50_chosen) filter (
            where run_order between (timeline_runs + 1) // 2 and (timeline_runs + 2) // 2
        ) as reference_p50,
        max(gap_hours) as gap_hours
    from within_gap
    group by timeline_id, kernel_provider
)

select
    providers.kernel_name,
    matched.kernel_provider,
    providers.kernel_operation_mode,
    providers.metric_name,
    providers.gpu_name,
    providers.x_name,
    providers.x_value,
    providers.extra_config,
    providers.axis,
    providers.step_rank,
    matched.liger_version,
    providers.reference_provider,
    matched.matched_runs,
    matched.reference_p50,
    matched.gap_hours
from matched
inner join reference_providers as providers using (timeline_id)
