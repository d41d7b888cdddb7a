/* MODEL
name: source
kind: VIEW
grain: [source_path]
depends_on: [delta_source]
*/
-- Every ingested (path, content): kind, upstream path/commit/date, rows read and quarantined.
select
    source_path, kind, content_sha256, size_bytes, upstream_path, upstream_commit,
    timezone('UTC', committed_at) as committed_at, in_upstream_head, rows_read, rows_quarantined, file_reason,
    snapshot
from delta_source
