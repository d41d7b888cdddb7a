/* MODEL
name: commit_range_changes
kind: VIEW
grain: [range_order, commit]
depends_on: [commit_change, commit_ranges]
*/
-- commit_range_changes: every commit of main placed on the commit axis: `range_order` is the
-- commit_order of the benchmarked commit that ends its commit_change range, so the commits of any
-- pair of benchmarked commits (a sweep may skip snapshots) are those with
-- from_order < range_order <= to_order, compared as numbers, never as commit text.
--   touches_kernel_of  the measured kernels whose source the commit changes (the one rule:
--                      pipeline.ingest.gh_pages.touches_kernel, docs/commits.md)
--   touches_harness_of the measured kernels whose harness the commit changes: their benchmark script,
--                      or a definition of a shared harness module it uses (history.paths.touches_harness)
-- Without a clone commit_change is empty, and so is this view.
select
    commit_ranges.commit_order as range_order,
    commit_change."commit",
    commit_change.committed_at,
    commit_change.subject,
    commit_change.touches_kernel_of,
    commit_change.touches_harness_of
from commit_change
inner join commit_ranges
    on commit_ranges."commit" = commit_change.to_commit
