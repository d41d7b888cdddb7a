/* MODEL
name: newest_source
kind: FULL
grain: {csv_winner: [measurement_digest], ki_first_row: [run_digest], csv_fact: [measurement_digest], csv_sighting: [measurement_digest, source_path, content_sha256]}
creates: [csv_winner, ki_first_row, csv_fact, csv_sighting]
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

-- KernelIndex's duplicate rule: within one file, the first row (of every row it maps, quarantined by us
-- or not) that makes an externalId keeps it; a later row with that externalId is not a KernelIndex run.
create or replace temp table ki_first_row as
select filename, external_id, min(record_no) as first_record_no
from csv_staged
where identity = 'kernelindex'
group by all;

-- A fact's KernelIndex identity is that of the row giving its values; a derived row carries no
-- KernelIndex run (external_id, run_digest and ki_* are null), only the OperationSpec of its kernel.
create or replace temp table csv_fact as
with winners as (
    select
        g.*,
        g.identity = 'kernelindex' and g.record_no > d.first_record_no as ki_duplicate
    from csv_staged as g
    inner join csv_winner as w
        on md5_number(g.measurement_digest) = w.k
        and g.source_rank * 4294967296 + coalesce(g.record_no, 0) = w.winner
    left join ki_first_row as d on g.filename = d.filename and g.external_id = d.external_id
    where g.reason is null
)

select
    measurement_digest, kernel_name, kernel_provider, kernel_operation_mode, metric_name,
    metric_unit, gpu_name, x_name, x_label, x_value, extra_config, liger_version,
    observed_at, observed_at_text, p20, p50, p80, occurrence,
    committed_at as value_committed_at, source_path as value_source_path,
    -- the toolchain the value's source recorded (a commit run's environment.json), for its derived environment
    source_environment,
    case when ki_duplicate then 'derived' else identity end as identity,
    case
        when ki_duplicate
            then '{ki_duplicate_reason}'  -- contracts/kernelindex/identity.py IDENTITY_REASONS
        else identity_reason
    end as identity_reason,
    operation_digest,
    case when identity = 'kernelindex' and not ki_duplicate then external_id end as external_id,
    case when identity = 'kernelindex' and not ki_duplicate then run_digest end as run_digest,
    case when identity = 'kernelindex' and not ki_duplicate then ki_workload_digest end as ki_workload_digest,
    case when identity = 'kernelindex' and not ki_duplicate then ki_implementation_digest end
        as ki_implementation_digest,
    case when identity = 'kernelindex' and not ki_duplicate then ki_protocol_digest end as ki_protocol_digest,
    case when identity = 'kernelindex' and not ki_duplicate then ki_environment_digest end as ki_environment_digest,
    case when identity = 'kernelindex' and not ki_duplicate then ki_identity_key end as ki_identity_key
from winners;

create or replace temp table csv_sighting as
select distinct measurement_digest, source_path
from csv_staged
where reason is null;
