/* MODEL
name: commit_suspects
kind: VIEW
grain: [kernel_name, gpu_name, from_commit, to_commit, commit]
depends_on: [commit_range_changes, commit_regressions]
*/
-- commit_suspects: for every `regression` row of commit_regressions, each commit of main in
-- (from_commit, to_commit] (git range semantics), one row per commit.
--
-- commit_change holds the commits between *consecutive* benchmarked commits; a sweep may skip
-- snapshots (not measured there), so a regression's range is the union of every commit_change range
-- whose to_commit sits in (from_commit_order, to_commit_order]. Commit order is commit_ranges'
-- (the step_rank commit_regressions was judged on), compared as numbers, never as commit text.
--   touches_kernel   whether the commit changed this kernel's source under src/liger_kernel/
--                    (commit_change.touches_kernel_of: the rule of gh_pages.touches_kernel,
--                    docs/commits.md); over-inclusive: a list of suspects, not a verdict.
-- A commit reached through two ranges (a merged branch commit whose range overlaps) is one row.
-- Without a clone commit_change is empty, and so is this view.
with regression_rows as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        x_name,
        extra_config,
        from_commit,
        to_commit,
        from_commit_order,
        to_commit_order
    from commit_regressions
    where verdict = 'regression'
)

select distinct
    regression_rows.kernel_name,
    regression_rows.kernel_provider,
    regression_rows.kernel_operation_mode,
    regression_rows.metric_name,
    regression_rows.gpu_name,
    regression_rows.x_name,
    regression_rows.extra_config,
    regression_rows.from_commit,
    regression_rows.to_commit,
    commit_range_changes."commit",
    commit_range_changes.committed_at,
    commit_range_changes.subject,
    coalesce(list_contains(commit_range_changes.touches_kernel_of, regression_rows.kernel_name), false)
        as touches_kernel
from regression_rows
inner join commit_range_changes
    on commit_range_changes.range_order > regression_rows.from_commit_order
    and commit_range_changes.range_order <= regression_rows.to_commit_order
