/* MODEL
name: fact_sighting
kind: VIEW
grain: [measurement_digest, source_path, content_sha256]
depends_on: [delta_fact_sighting]
*/
-- One row per measurement x source content that carried it (append-only).
select
    measurement_digest, source_path, content_sha256, upstream_path, upstream_commit,
    timezone('UTC', committed_at) as committed_at, run_seq
from delta_fact_sighting
