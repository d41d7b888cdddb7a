/* MODEL
name: series_lineage
kind: VIEW
grain: [kernel_name, gpu_name, to_order]
depends_on: [commit_harness, commit_range_changes, commit_ranges, series_steps]
*/
-- series_lineage: one row per kernel, GPU and benchmarked commit where the kernel's set of series
-- keys changes (issue 54): keys (provider, pass, metric, x_name, x_value, extra_config) measured at
-- the kernel's previous benchmarked commit on that GPU that vanish, and keys that appear. A harness
-- change redefines series (upstream's #1116 rewrote benchmark_dyt.py and its sizes: 80 keys vanish,
-- 288 appear between e6f84b8 and ab7fe2a); the commits in range that change this kernel's harness
-- (touches_harness) are listed beside the counts. Commit axis only; every provider counts.
--   from_order / to_order    the kernel's consecutive benchmarked commits on this GPU
--   vanished / appeared / kept   series keys measured only before / only after / at both
--   harness_commits          full shas of the commits in (from, to] changing this kernel's harness
--   harness_text             '<short sha>, <files>' per such commit ('c2f4c02, benchmark_dyt.py')
with keys as (
    select distinct
        kernel_name, gpu_name, step_rank, kernel_provider, kernel_operation_mode, metric_name,
        x_name, x_value, extra_config
    from series_steps
    where axis = 'commit'
),

kernel_steps as (
    select
        kernel_name,
        gpu_name,
        step_rank as to_order,
        lag(step_rank) over (partition by kernel_name, gpu_name order by step_rank) as from_order
    from (select distinct kernel_name, gpu_name, step_rank from keys) as steps
),

appearing as (
    -- keys at a step whose kernel was measured the step before, absent there
    select
        kernel_steps.kernel_name,
        kernel_steps.gpu_name,
        kernel_steps.to_order,
        count(*) as appeared
    from kernel_steps
    inner join keys as new_keys
        on new_keys.kernel_name = kernel_steps.kernel_name
        and new_keys.gpu_name = kernel_steps.gpu_name
        and new_keys.step_rank = kernel_steps.to_order
    left join keys as old_keys
        on old_keys.kernel_name = kernel_steps.kernel_name
        and old_keys.gpu_name = kernel_steps.gpu_name
        and old_keys.step_rank = kernel_steps.from_order
        and old_keys.kernel_provider = new_keys.kernel_provider
        and old_keys.kernel_operation_mode = new_keys.kernel_operation_mode
        and old_keys.metric_name = new_keys.metric_name
        and old_keys.x_name is not distinct from new_keys.x_name
        and old_keys.x_value is not distinct from new_keys.x_value
        and old_keys.extra_config is not distinct from new_keys.extra_config
    where kernel_steps.from_order is not null and old_keys.step_rank is null
    group by kernel_steps.kernel_name, kernel_steps.gpu_name, kernel_steps.to_order
),

vanishing as (
    -- keys at the kernel's step before, and whether each is measured again
    select
        kernel_steps.kernel_name,
        kernel_steps.gpu_name,
        kernel_steps.from_order,
        kernel_steps.to_order,
        count(case when new_keys.step_rank is null then 1 end) as vanished,
        count(new_keys.step_rank) as kept
    from kernel_steps
    inner join keys as old_keys
        on old_keys.kernel_name = kernel_steps.kernel_name
        and old_keys.gpu_name = kernel_steps.gpu_name
        and old_keys.step_rank = kernel_steps.from_order
    left join keys as new_keys
        on new_keys.kernel_name = kernel_steps.kernel_name
        and new_keys.gpu_name = kernel_steps.gpu_name
        and new_keys.step_rank = kernel_steps.to_order
        and new_keys.kernel_provider = old_keys.kernel_provider
        and new_keys.kernel_operation_mode = old_keys.kernel_operation_mode
        and new_keys.metric_name = old_keys.metric_name
        and new_keys.x_name is not distinct from old_keys.x_name
        and new_keys.x_value is not distinct from old_keys.x_value
        and new_keys.extra_config is not distinct from old_keys.extra_config
    group by kernel_steps.kernel_name, kernel_steps.gpu_name, kernel_steps.from_order, kernel_steps.to_order
),

changed as (
    select
        vanishing.kernel_name,
        vanishing.gpu_name,
        vanishing.from_order,
        vanishing.to_order,
        vanishing.vanished,
        coalesce(appearing.appeared, 0) as appeared,
        vanishing.kept
    from vanishing
    left join appearing
        on appearing.kernel_name = vanishing.kernel_name
        and appearing.gpu_name = vanishing.gpu_name
        and appearing.to_order = vanishing.to_order
    where vanishing.vanished > 0 or coalesce(appearing.appeared, 0) > 0
),

harness as (
    select
        changed.kernel_name,
        changed.gpu_name,
        changed.to_order,
        list_sort(list_distinct(list(commit_range_changes."commit"))) as harness_commits,
        array_to_string(list_sort(list_distinct(list(
            substr(commit_range_changes."commit", 1, 7) || ', ' || commit_harness.harness_files
        ))), '; ') as harness_text
    from changed
    inner join commit_range_changes
        on commit_range_changes.range_order > changed.from_order
        and commit_range_changes.range_order <= changed.to_order
        and list_contains(commit_range_changes.touches_harness_of, changed.kernel_name)
    inner join commit_harness
        on commit_harness."commit" = commit_range_changes."commit"
        and commit_harness.kernel_name = changed.kernel_name
    group by changed.kernel_name, changed.gpu_name, changed.to_order
)

select
    changed.kernel_name,
    changed.gpu_name,
    changed.from_order,
    changed.to_order,
    range_from."commit" as from_commit,
    range_to."commit" as to_commit,
    range_to.short_commit as to_label,
    changed.vanished,
    changed.appeared,
    changed.kept,
    coalesce(harness.harness_commits, cast([] as varchar[])) as harness_commits,
    harness.harness_text
from changed
left join commit_ranges as range_from on range_from.commit_order = changed.from_order
left join commit_ranges as range_to on range_to.commit_order = changed.to_order
left join harness
    on harness.kernel_name = changed.kernel_name
    and harness.gpu_name = changed.gpu_name
    and harness.to_order = changed.to_order
