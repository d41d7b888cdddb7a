/* MODEL
name: fact_provenance
depends_on: [delta_fact_sighting, delta_source]
*/
-- fact_provenance: per measurement, from every source content that carried it (fact_sighting):
-- source_count, first/last seen commit and date (CSV snapshots with a commit date; ties on the
-- date go to the path), in_upstream_head (any carrying source is in upstream's HEAD today),
-- snapshot (the gh-pages run that carried it; the smallest id if several did).
-- liger.duckdb keeps it as a table, refreshed for the measurements that new sightings touch.
with sighting_source as (
    select
        g.measurement_digest,
        g.source_path,
        g.upstream_commit,
        g.committed_at,
        s.in_upstream_head,
        s.snapshot
    from delta_fact_sighting as g
    left join delta_source as s
        on g.source_path = s.source_path
        and g.content_sha256 = s.content_sha256
)

select
    measurement_digest,
    count(distinct source_path) as source_count,
    min(committed_at) as first_seen_at,
    arg_min(upstream_commit, strftime(committed_at, '%Y-%m-%d %H:%M:%S.%f') || source_path)
        filter (where committed_at is not null) as first_seen_commit,
    max(committed_at) as last_seen_at,
    arg_max(upstream_commit, strftime(committed_at, '%Y-%m-%d %H:%M:%S.%f') || source_path)
        filter (where committed_at is not null) as last_seen_commit,
    bool_or(in_upstream_head) as in_upstream_head,
    min(snapshot) as snapshot
from sighting_source
group by measurement_digest
