/* MODEL
name: benchmark_commit
kind: VIEW
grain: [commit]
depends_on: [benchmark_snapshot]
*/
-- One row per benchmarked commit: how many runs benchmarked it, and whether any commit since the
-- previous benchmarked commit touched src/liger_kernel/ (false: its runs re-run the previous code),
-- and whether any changed the benchmark harness (harness_changed; issue 54).
select
    commit,
    min(short_commit) as short_commit,
    max(release) as release,
    min(commit_order) as commit_order,
    max(commits_between) as commits_between,
    min(order_source) as order_source,
    min(committed_at) as committed_at,
    min(subject) as subject,
    bool_or(kernel_changed) as kernel_changed,
    bool_or(harness_changed) as harness_changed,
    count(*) as runs,
    list_sort(list(snapshot)) as snapshots
from benchmark_snapshot
group by commit
