/* MODEL
name: alert_harness
kind: VIEW
grain: [alert_id, commit]
depends_on: [alert_range_commits]
*/
-- alert_harness: one row per alert and commit of main that changes how one of the alert's flagged
-- kernels is measured, in that kernel's flagged ranges (the touches_harness rule: the kernel's
-- benchmark script, or a definition of a shared harness module the script uses, compared as ASTs
-- between the commit and its parent; issue 54). Beside alert_suspects (the kernels' source), never
-- in it. Empty without a clone.
select
    alert_id,
    "commit",
    substr("commit", 1, 7) as short_commit,
    min(committed_at) as committed_at,
    min(subject) as subject,
    list_sort(list_distinct(list(kernel_name))) as kernels,
    array_to_string(list_sort(list_distinct(list(harness_files))), '; ') as harness_files
from alert_range_commits
where harness
group by alert_id, "commit"
