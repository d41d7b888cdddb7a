/* MODEL
name: fact_measurement
kind: VIEW
grain: [measurement_digest]
depends_on: [delta_dim_environment, delta_fact_measurement, delta_learned_dimension, fact_provenance]
*/
-- fact_measurement as readers see it: the Delta table's facts, plus what is derived when read.
-- * Provenance (fact_provenance, from fact_sighting): source_count, first/last seen commit and
--   date, in_upstream_head.
-- * Learned dimensions: a derived CSV fact (no record of its own, identity 'derived') takes the
--   environment learned for its GPU, and (ms rows only) the protocol learned for its pass and GPU.
--   KernelIndex's own digests of a 'kernelindex' row are never overridden, nor an environment whose
--   toolchain the fact's source recorded (a commit run's environment.json): that is observed, not learned.
-- * Timestamps as UTC wall-clock TIMESTAMPs, whatever the session's time zone.
with learned_environment as (
    select gpu_name, digest from delta_learned_dimension where dimension = 'environment'
),

learned_protocol as (
    select gpu_name, kernel_operation_mode, digest from delta_learned_dimension where dimension = 'protocol'
),

recorded_toolchain as (
    select environment_digest from delta_dim_environment
    where origin = 'derived' and json_extract(object_json, '$.spec.software')::varchar <> '{}'
)

select
    f.measurement_digest,
    f.kernel_name,
    f.kernel_provider,
    f.kernel_operation_mode,
    f.metric_name,
    f.metric_unit,
    f.gpu_name,
    f.x_name,
    f.x_label,
    f.x_value,
    f.extra_config,
    f.liger_version,
    timezone('UTC', f.observed_at) as observed_at,
    f.p20,
    f.p50,
    f.p80,
    case
        when f.origin = 'csv' and f.identity = 'derived' and rt.environment_digest is null
            then coalesce(le.digest, f.environment_digest)
        else f.environment_digest
    end as environment_digest,
    case
        when f.origin = 'csv' and f.identity = 'derived' and f.metric_unit = 'ms'
            then coalesce(lp.digest, f.protocol_digest)
        else f.protocol_digest
    end as protocol_digest,
    f.workload_digest,
    f.implementation_digest,
    f.operation_digest,
    f.external_id,
    f.run_digest,
    f.identity,
    f.identity_reason,
    f.occurrence,
    f.fold_rule,
    coalesce(p.source_count, 0) as source_count,
    f.origin,
    p.first_seen_commit,
    timezone('UTC', p.first_seen_at) as first_seen_at,
    p.last_seen_commit,
    timezone('UTC', p.last_seen_at) as last_seen_at,
    p.in_upstream_head,
    p.snapshot,
    f.run_seq
from delta_fact_measurement as f
left join fact_provenance as p on f.measurement_digest = p.measurement_digest
left join learned_environment as le on f.gpu_name = le.gpu_name
left join recorded_toolchain as rt on f.environment_digest = rt.environment_digest
left join learned_protocol as lp
    on f.gpu_name = lp.gpu_name
    and f.kernel_operation_mode = lp.kernel_operation_mode
