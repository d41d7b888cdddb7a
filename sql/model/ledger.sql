/* MODEL
name: ledger
kind: FULL
grain: {batch_quarantine: [source_file, location], batch_source_rows: [source_path]}
creates: [batch_quarantine, batch_source_rows]
depends_on: [batch_source, csv_staged, ki_staged, problems]
*/
-- The batch's quarantine (rejected rows and files, with reason codes) and its source ledger:
-- one row per ingested (path, content) with rows read and quarantined.
create or replace temp table batch_quarantine as
select source_path as source_file, location, reason, raw from csv_staged where reason is not null
union all
select source_path, location, reason, raw from ki_staged where reason is not null
union all
select source_file, location, reason, raw from problems;

create or replace temp table batch_source_rows as
with counts as (
    select
        source_path,
        count(*) as rows_read,
        count(*) filter (where reason is not null) as rows_quarantined,
        max(case when location = 'file' then reason end) as file_reason
    from (
        select source_path, reason, location from csv_staged
        union all
        select source_path, reason, location from ki_staged
    )
    group by source_path
)

select
    s.source_path, s.kind, s.content_sha256, s.size_bytes, s.upstream_path, s.upstream_commit,
    s.committed_at, s.in_upstream_head, coalesce(c.rows_read, 0) as rows_read,
    coalesce(c.rows_quarantined, 0) as rows_quarantined, c.file_reason, s.snapshot
from batch_source as s
left join counts as c on s.source_path = c.source_path;
