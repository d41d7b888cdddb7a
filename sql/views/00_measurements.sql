-- One row per distinct measurement, with the columns people query.
create or replace view measurements as
with facts as (
    select * from fact_measurement
),
renamed as (
    select
        measurement_digest,
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        metric_unit,
        gpu_name,
        x_name,
        x_label,
        x_value,
        extra_config,
        liger_version,
        observed_at,
        p20,
        p50,
        p80,
        environment_digest,
        protocol_digest,
        workload_digest,
        implementation_digest,
        source_count,
        origin,
        first_seen_commit,
        first_seen_at,
        last_seen_commit,
        last_seen_at,
        in_upstream_head
    from facts
)
select * from renamed;
