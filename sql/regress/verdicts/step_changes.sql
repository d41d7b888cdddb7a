/* MODEL
name: step_changes
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [kernel_name, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config, axis]
partitions_from: ranked_measurements
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, axis, to_step_rank]
chain: {steps: series_steps, within: [kernel_provider]}
depends_on: [series_steps]
*/
-- step_changes: each pair of consecutive steps of each series on each axis, all providers.
--
-- Consecutive means consecutive among the steps this series was measured at on
-- that axis: versions in PEP 440 order, or benchmarked commits in commit order
-- (step_rank), never text order. A commit benchmarked twice is one step with
-- two runs, never a pair. Both sides summarize every run of their step
-- (series_steps): p50 is the median of the runs, p20/p80 the envelope band,
-- *_runs the number of runs, *_spread_log how far those runs disagree. Lower is
-- better for every metric (ms and MB), so ratio > 1 is "worse".
-- bands_separated: for a worse change to_p20 > from_p80, for a better change
-- to_p80 < from_p20: the bands of every run of one step clear the bands of
-- every run of the other.
-- Reference providers (torch, huggingface, ...) are included as context;
-- verdicts judge liger-family providers only.
with paired as (
    select
        series_steps.*,
        lag(step_label) over series_order as from_label,
        lag(step_rank) over series_order as from_step_rank,
        lag(liger_version) over series_order as from_version,
        lag(version_rank) over series_order as from_version_rank,
        lag(benchmarked_commit) over series_order as from_commit,
        lag(release) over series_order as from_release,
        lag(observed_at) over series_order as from_observed_at,
        lag(p20) over series_order as from_p20,
        lag(p50) over series_order as from_p50,
        lag(p80) over series_order as from_p80,
        lag(runs) over series_order as from_runs,
        lag(spread_log) over series_order as from_spread_log
    from series_steps
    window series_order as (
        partition by
            axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config
        order by step_rank
    )
)

select
    axis,
    kernel_name,
    kernel_provider,
    is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    from_label,
    step_label as to_label,
    from_step_rank,
    step_rank as to_step_rank,
    from_version,
    liger_version as to_version,
    from_version_rank,
    version_rank as to_version_rank,
    from_commit,
    benchmarked_commit as to_commit,
    from_release,
    release as to_release,
    alias_provider,
    from_observed_at,
    observed_at as to_observed_at,
    from_p20,
    from_p50,
    from_p80,
    p20 as to_p20,
    p50 as to_p50,
    p80 as to_p80,
    from_runs,
    runs as to_runs,
    from_spread_log,
    spread_log as to_spread_log,
    p50 / from_p50 as ratio,
    ln(p50 / from_p50) as log_ratio,
    case
        when p50 > from_p50 then 'worse'
        when p50 < from_p50 then 'better'
        else 'equal'
    end as direction,
    case
        when p50 > from_p50 then p20 > from_p80
        when p50 < from_p50 then p80 < from_p20
        else false
    end as bands_separated
from paired
where from_step_rank is not null
