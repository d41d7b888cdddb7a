/* MODEL
name: fact
kind: FULL
grain: {batch_fact: [measurement_digest], batch_sighting: [measurement_digest, source_path, content_sha256]}
creates: [batch_fact, batch_sighting]
depends_on: [batch_record, batch_record_rows, csv_fact, csv_sighting, derived_environment, derived_implementation, derived_operation, derived_protocol, derived_workload, fold]
*/
-- The batch's facts, each with its own dimension digests: a folded record's, else KernelIndex's own
-- (identity 'kernelindex': the objects its importer makes from the row), else derived by our rules.
-- Learned protocol/environment are not written here: they are applied when the warehouse is
-- read (sql/serve/fact_measurement.sql), so a newer record changes them without a rewrite.
-- A record that folds into no CSV fact is a fact of its own: it names its workload only by
-- digest, which stands in for the config in the identity (digests.record_only_extra_config),
-- so two records of one sweep taken in the same second stay two facts.
create or replace temp table batch_fact as
with csv_based as (
    select
        f.measurement_digest, f.kernel_name, f.kernel_provider, f.kernel_operation_mode, f.metric_name,
        f.metric_unit, f.gpu_name, f.x_name, f.x_label, f.x_value, f.extra_config, f.liger_version,
        f.observed_at, f.p20, f.p50, f.p80, f.occurrence,
        coalesce(k.environment_digest, f.ki_environment_digest, de.digest) as environment_digest,
        coalesce(k.protocol_digest, f.ki_protocol_digest, dp.digest) as protocol_digest,
        coalesce(k.workload_digest, f.ki_workload_digest, dw.digest) as workload_digest,
        coalesce(k.implementation_digest, f.ki_implementation_digest, di.digest) as implementation_digest,
        coalesce(f.operation_digest, dop.digest) as operation_digest,
        case when k.measurement_digest is null then 'csv' else 'csv+kernelindex' end as origin,
        -- a folded record makes the fact KernelIndex's run, whatever our mapping of the row said
        case when k.measurement_digest is null then f.identity else 'kernelindex' end as identity,
        case when k.measurement_digest is null then f.identity_reason end as identity_reason,
        coalesce(f.external_id, k.external_id) as external_id,
        coalesce(f.run_digest, k.run_digest) as run_digest,
        k.fold_rule,
        f.value_committed_at, f.value_source_path
    from csv_fact as f
    left join fold as k on f.measurement_digest = k.measurement_digest
    left join derived_environment as de
        on f.gpu_name = de.gpu_name and f.source_environment is not distinct from de.source_environment
    left join derived_protocol as dp
        on f.kernel_operation_mode = dp.kernel_operation_mode
        and f.metric_name = dp.metric_name
        and f.metric_unit = dp.metric_unit
    left join derived_workload as dw
        on f.kernel_name = dw.kernel_name
        and f.x_name is not distinct from dw.x_name
        and f.x_value is not distinct from dw.x_value
        and f.extra_config is not distinct from dw.extra_config
    left join derived_implementation as di
        on f.kernel_name = di.kernel_name
        and f.kernel_provider is not distinct from di.kernel_provider
        and f.liger_version is not distinct from di.liger_version
    left join derived_operation as dop on f.kernel_name = dop.kernel_name
),

record_only as (
    select
        r.*, 'speed' as metric_name, 'ms' as metric_unit, null::varchar as x_name, null::varchar as x_label,
        null::varchar as x_value, {record_only_extra_config} as extra_config, 1::bigint as occurrence
    from batch_record as r
    anti join fold as k using (
        kernel_name, kernel_operation_mode, gpu_name, observed_at_text, p20, p50, p80,
        protocol_digest, environment_digest, workload_digest, implementation_digest, run_digest
    )
),

record_keyed as (
    select *, {measurement_digest} as measurement_digest from record_only
),

record_facts as (
    select
        measurement_digest, r.kernel_name, kernel_provider, kernel_operation_mode,
        metric_name, metric_unit, gpu_name, x_name, x_label, x_value, null::varchar as extra_config,
        liger_version, observed_at, p20, p50, p80, occurrence, environment_digest, protocol_digest,
        workload_digest, implementation_digest, dop.digest as operation_digest, 'kernelindex' as origin,
        'kernelindex' as identity, null::varchar as identity_reason, external_id, run_digest,
        null::varchar as fold_rule, null::timestamp as value_committed_at, null::varchar as value_source_path
    from record_keyed as r
    left join derived_operation as dop on r.kernel_name = dop.kernel_name
    qualify row_number() over (
        partition by measurement_digest
        order by workload_digest, implementation_digest, protocol_digest, environment_digest, run_digest
    ) = 1
)

select * from csv_based
union all by name
-- never collides with a CSV digest: its config slot holds 'workload:...', not JSON
select * from record_facts;

-- Sightings: every (measurement, source) pair. A folded record's sources are sightings of the
-- CSV fact it folded into; a record-only fact's sources are its own.
create or replace temp table batch_sighting as
select measurement_digest, source_path from csv_sighting
union
select k.measurement_digest, r.source_path
from fold as k
inner join batch_record_rows as r using (
    kernel_name, kernel_operation_mode, gpu_name, observed_at_text, p20, p50, p80,
    protocol_digest, environment_digest, workload_digest, implementation_digest, run_digest
)
union
select f.measurement_digest, r.source_path
from batch_fact as f
inner join batch_record_rows as r
    on f.origin = 'kernelindex'
    and f.kernel_name = r.kernel_name
    and f.kernel_operation_mode = r.kernel_operation_mode
    and f.gpu_name = r.gpu_name
    and f.observed_at = r.observed_at
    and f.p20 = r.p20 and f.p50 = r.p50 and f.p80 = r.p80
    and f.workload_digest = r.workload_digest
    and f.implementation_digest = r.implementation_digest
    and f.protocol_digest = r.protocol_digest
    and f.environment_digest = r.environment_digest
    and f.run_digest is not distinct from r.run_digest;
