/* MODEL
name: fact_provenance
kind: VIEW
grain: [measurement_digest]
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
),

-- One row per measurement and path first, then per measurement: a path's several contents (a file
-- overwritten upstream) count once. count(distinct source_path) in one grouping cost 0.68 s at 1 M
-- facts, 10.7 s at 10 M; the two 0.57 s and 9.2 s.
per_path as (
    select
        measurement_digest,
        source_path,
        min(committed_at) as first_at,
        arg_min(upstream_commit, committed_at) filter (where committed_at is not null) as first_commit,
        max(committed_at) as last_at,
        arg_max(upstream_commit, committed_at) filter (where committed_at is not null) as last_commit,
        bool_or(in_upstream_head) as in_upstream_head,
        min(snapshot) as snapshot
    from sighting_source
    group by measurement_digest, source_path
)

select
    measurement_digest,
    count(*) as source_count,
    min(first_at) as first_seen_at,
    arg_min(first_commit, strftime(first_at, '%Y-%m-%d %H:%M:%S.%f') || source_path)
        filter (where first_at is not null) as first_seen_commit,
    max(last_at) as last_seen_at,
    arg_max(last_commit, strftime(last_at, '%Y-%m-%d %H:%M:%S.%f') || source_path)
        filter (where last_at is not null) as last_seen_commit,
    bool_or(in_upstream_head) as in_upstream_head,
    min(snapshot) as snapshot
from per_path
group by measurement_digest
