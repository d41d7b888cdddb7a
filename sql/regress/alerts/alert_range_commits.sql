/* MODEL
name: alert_range_commits
kind: VIEW
grain: [alert_id, kernel_name]
depends_on: [alert_members, commit_harness, commit_range_changes, commit_ranges]
*/
-- alert_range_commits: one row per alert, flagged kernel and range of that kernel's flagged pairs
-- (from_order, to_order] on the commit axis, with whether its commits are known, and one row per
-- commit of main in that range when they are (`commit` NULL otherwise).
--   commits_known  every benchmarked commit in the range has its commits listed (a clone placed it:
--                  commit_ranges.kernel_unknown_through does not grow over the range)
--   touches        the commit changes this kernel's source: commit_change.touches_kernel_of, the
--                  one rule (pipeline.ingest.gh_pages.touches_kernel, docs/commits.md)
--   harness        the commit changes how this kernel is measured (commit_change.touches_harness_of,
--                  history.paths.touches_harness); harness_files names what (benchmark_dyt.py, utils.py:f)
-- Version-axis alerts have no commits: commits_known false.
-- Only the ranges of the alert's 'step' pairs: an excursion is judged on the step into it (the
-- alert's range), not on the pair that takes it back. With upstream's full gh-pages history,
-- fused_linear_cross_entropy's x2.2 at 2845fe8 is taken back at 009401c, a commit no clone holds:
-- its unknown range made the whole alert `unknown` (issue 42).
with member_ranges as (
    select distinct
        m.alert_id,
        m.kernel_name,
        m.from_order,
        m.to_order,
        coalesce(
            m.axis = 'commit'
            and range_to.kernel_unknown_through = range_from.kernel_unknown_through,
            false
        ) as commits_known
    from alert_members as m
    left join commit_ranges as range_from
        on m.axis = 'commit' and range_from.commit_order = m.from_order
    left join commit_ranges as range_to
        on m.axis = 'commit' and range_to.commit_order = m.to_order
    where m.role = 'step'
)

select distinct
    member_ranges.alert_id,
    member_ranges.kernel_name,
    member_ranges.from_order,
    member_ranges.to_order,
    member_ranges.commits_known,
    commit_range_changes."commit",
    commit_range_changes.committed_at,
    commit_range_changes.subject,
    coalesce(list_contains(commit_range_changes.touches_kernel_of, member_ranges.kernel_name), false)
        as touches,
    coalesce(list_contains(commit_range_changes.touches_harness_of, member_ranges.kernel_name), false)
        as harness,
    commit_harness.harness_files
from member_ranges
left join commit_range_changes
    on member_ranges.commits_known
    and commit_range_changes.range_order > member_ranges.from_order
    and commit_range_changes.range_order <= member_ranges.to_order
left join commit_harness
    on commit_harness."commit" = commit_range_changes."commit"
    and commit_harness.kernel_name = member_ranges.kernel_name
