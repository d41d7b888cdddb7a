/* MODEL
name: alert_suspects
kind: VIEW
grain: [alert_id, commit]
depends_on: [alert_range_commits]
*/
-- alert_suspects: one row per alert and commit of main that touches the source of one of the
-- alert's flagged kernels in that kernel's flagged ranges (the touches_kernel rule; a commit
-- touching only other files is never a suspect). Empty without a clone.
--   short_commit  the first 7 hex digits
--   kernels       the alert's flagged kernels whose source it touches
select
    alert_id,
    "commit",
    substr("commit", 1, 7) as short_commit,
    min(committed_at) as committed_at,
    min(subject) as subject,
    list_sort(list_distinct(list(kernel_name))) as kernels
from alert_range_commits
where touches
group by alert_id, "commit"
