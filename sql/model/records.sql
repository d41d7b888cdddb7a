/* MODEL
name: records
kind: FULL
grain: {batch_record_rows: [source_path, run_digest], batch_record: [run_digest]}
creates: [batch_record_rows, batch_record]
depends_on: [csv_fact, ki_staged, known_gpu]
*/
-- kernelindex records of the batch: GPU name resolved to a CSV `gpu_name` with the same slug
-- (known from earlier runs or this batch), else the environment's product name; one row per
-- distinct record, with the sources that carried it. slug() is the Python rule (contracts/rules.py),
-- a macro the driver registers.
create or replace temp table batch_record_rows as
with good as (
    select * from ki_staged where reason is null
),

csv_gpus as (
    select slug, min(gpu_name) as gpu_name
    from (
        select slug(gpu_name) as slug, gpu_name
        from (select gpu_name from known_gpu union select gpu_name from csv_fact)
    )
    group by slug
)

select
    g.source_path, g.kernel_name, g.kernel_operation_mode, g.kernel_provider,
    coalesce(
        c.gpu_name,
        case
            when g.gpu_slug is null
                or slug(g.environment_gpu_name) = g.gpu_slug
                then nullif(g.environment_gpu_name, '')
        end,
        g.gpu_slug,
        nullif(g.environment_gpu_name, '')
    ) as gpu_name,
    g.observed_at, g.observed_at_text, g.liger_version, g.p20, g.p50, g.p80,
    g.protocol_digest, g.environment_digest, g.workload_digest, g.implementation_digest,
    g.protocol_json, g.environment_json, g.run_digest, g.external_id
from good as g
left join csv_gpus as c on g.gpu_slug = c.slug;

create or replace temp table batch_record as
select
    kernel_name, kernel_operation_mode, kernel_provider, gpu_name, observed_at, observed_at_text,
    liger_version, p20, p50, p80, protocol_digest, environment_digest, workload_digest,
    implementation_digest, run_digest, external_id,
    any_value(protocol_json) as protocol_json,
    any_value(environment_json) as environment_json
from batch_record_rows
group by all;
