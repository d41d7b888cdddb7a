/* MODEL
name: commit_change
kind: VIEW
grain: [commit]
depends_on: [commit_kernel, delta_commit_change]
*/
-- Every commit between two consecutive benchmarked commits (git log from..to), with the files it
-- touches under src/liger_kernel/ and the measured kernels whose source those files are
-- (touches_kernel_of; the rule: pipeline/history/paths.touches_kernel, docs/commits.md), and the
-- measured kernels whose harness it changes (touches_harness_of: history.paths.touches_harness over
-- harness_changes; commit_harness names the files per kernel).
select
    c.from_commit, c.to_commit, c.commit, timezone('UTC', c.committed_at) as committed_at, c.subject,
    c.first_parent, c.kernel_paths, k.touches_kernel_of, c.harness_changes, k.touches_harness_of
from delta_commit_change as c
left join commit_kernel as k on k.commit = c.commit
