-- Offending rows: measurement digests that appear more than once, or two digests for one identity key.
with facts as (
    select * from fact_measurement
),
by_digest as (
    select measurement_digest, count(*) as n
    from facts
    group by measurement_digest
    having count(*) > 1
),
by_key as (
    -- record-only facts carry no config; their workload digest takes its place in the identity
    select kernel_name, kernel_provider, kernel_operation_mode, metric_name, x_name, x_value,
           coalesce(extra_config, 'workload:' || workload_digest) as extra_config,
           gpu_name, observed_at, liger_version, count(*) as n
    from facts
    group by all
    having count(*) > 1
)
select 'duplicate digest' as problem, measurement_digest as detail, n from by_digest
union all
select 'duplicate identity key', concat_ws(' / ', kernel_name, kernel_provider, kernel_operation_mode, metric_name,
       x_value, gpu_name, observed_at, liger_version), n from by_key;
