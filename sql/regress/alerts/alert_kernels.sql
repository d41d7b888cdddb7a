/* MODEL
name: alert_kernels
kind: VIEW
grain: [alert_id, kernel_name]
depends_on: [alert_range_commits]
*/
-- alert_kernels: one row per alert and flagged kernel, with whether that kernel's code changed.
--
-- kernel_changed is per kernel, not per repository: true when a commit of main in any of the
-- kernel's flagged ranges touches the kernel's source (alert_range_commits.touches, the
-- touches_kernel rule); false when every such range's commits are known and none does; NULL when
-- a range's commits are not known (no clone, or the version axis).
--   suspects          full shas of the commits in those ranges that touch this kernel's source
-- harness_changed is the same for the kernel's harness (alert_range_commits.harness, the
-- touches_harness rule: its benchmark script, or a shared harness definition the script uses).
--   harness_suspects  full shas of the commits in those ranges that change its harness
--   harness_text      '<short sha> (<files>)' per such commit, e.g. 'c2f4c02 (benchmark_dyt.py)'
--   cause             code (its source changed; whatever its harness did), harness (only its
--                     harness changed), environment (neither), unknown (commits not known)
--   commits_in_range  distinct commits of main in those ranges (NULL when not known)
with per_range as (
    select
        alert_id,
        kernel_name,
        from_order,
        to_order,
        bool_and(commits_known) as commits_known
    from alert_range_commits
    group by alert_id, kernel_name, from_order, to_order
),

per_kernel as (
    select
        alert_id,
        kernel_name,
        count(*) as ranges,
        count(case when commits_known then 1 end) as ranges_known
    from per_range
    group by alert_id, kernel_name
),

touching as (
    select
        alert_id,
        kernel_name,
        count(distinct "commit") as commits_in_range,
        count(distinct case when touches then "commit" end) as touching_commits,
        list_sort(list_distinct(list(case when touches then "commit" end))) as suspects,
        count(distinct case when harness then "commit" end) as harness_commits,
        list_sort(list_distinct(list(case when harness then "commit" end))) as harness_suspects,
        array_to_string(list_sort(list_distinct(list(
            case when harness then substr("commit", 1, 7) || ' (' || harness_files || ')' end
        ))), '; ') as harness_text
    from alert_range_commits
    where commits_known
    group by alert_id, kernel_name
)

select
    per_kernel.alert_id,
    per_kernel.kernel_name,
    case
        when coalesce(touching.touching_commits, 0) > 0 then true
        when per_kernel.ranges_known = per_kernel.ranges then false
        else cast(null as boolean)
    end as kernel_changed,
    case
        when per_kernel.ranges_known = per_kernel.ranges then coalesce(touching.commits_in_range, 0)
    end as commits_in_range,
    coalesce(touching.suspects, cast([] as varchar[])) as suspects,
    case
        when coalesce(touching.harness_commits, 0) > 0 then true
        when per_kernel.ranges_known = per_kernel.ranges then false
        else cast(null as boolean)
    end as harness_changed,
    coalesce(touching.harness_suspects, cast([] as varchar[])) as harness_suspects,
    touching.harness_text,
    case
        when coalesce(touching.touching_commits, 0) > 0 then 'code'
        when per_kernel.ranges_known < per_kernel.ranges then 'unknown'
        when coalesce(touching.harness_commits, 0) > 0 then 'harness'
        else 'environment'
    end as cause
from per_kernel
left join touching
    on touching.alert_id = per_kernel.alert_id
    and touching.kernel_name = per_kernel.kernel_name
