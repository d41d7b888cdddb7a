/* MODEL
name: commit_ranges
kind: VIEW
grain: [commit_order]
depends_on: [benchmark_commit]
*/
-- commit_ranges: each benchmarked commit with running totals over commit order, so that any two
-- benchmarked commits (a sweep may skip snapshots) are compared with two equi-joins, not a range
-- join:
--   commits_through         commits of main up to this benchmarked commit (running sum of
--                           benchmark_commit.commits_between): commits between a and b =
--                           commits_through(b) - commits_through(a)
--   kernel_changes_through  running count of benchmarked commits whose range from the previous
--                           benchmarked commit may touch src/liger_kernel/ (kernel_changed true or
--                           unknown): 0 between a and b means no commit in (a, b] touched the
--                           kernels, so b re-ran a's code (a re-run, a unit of noise);
--   kernel_unknown_through  running count of benchmarked commits whose kernel_changed is unknown.
--   harness_changes_through running count of benchmarked commits whose range changes the benchmark
--                           harness (harness_changed true or unknown): a range with no kernel
--                           change but a harness change measures differently, so it is no re-run
select
    commit_order,
    "commit",
    short_commit,
    release,
    commits_between,
    kernel_changed,
    sum(coalesce(commits_between, 0)) over commit_sequence as commits_through,
    sum(case when kernel_changed = false then 0 else 1 end) over commit_sequence
        as kernel_changes_through,
    sum(case when kernel_changed is null then 1 else 0 end) over commit_sequence
        as kernel_unknown_through,
    sum(case when harness_changed = false then 0 else 1 end) over commit_sequence
        as harness_changes_through
from benchmark_commit
where commit_order is not null
window commit_sequence as (
    order by commit_order
    rows between unbounded preceding and current row
)
