/* MODEL
name: benchmark_snapshot
kind: VIEW
grain: [snapshot]
depends_on: [delta_benchmark_snapshot]
*/
-- One row per benchmark run of a known commit (a gh-pages snapshot, or our own bisect run: `origin`,
-- `environment`): the commit it benchmarked, its release and its place in commit order
-- (pipeline/ingest/commits.py; docs/commits.md, docs/bisect.md).
select
    snapshot, folder, commit, short_commit, commit_status, release, release_source, commit_order,
    commits_between, order_source, timezone('UTC', committed_at) as committed_at, subject, on_first_parent,
    kernel_changed, harness_changed, timezone('UTC', run_started_at) as run_started_at, gh_pages_commit,
    origin, environment
from delta_benchmark_snapshot
