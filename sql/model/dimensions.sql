/* MODEL
name: dimensions
kind: FULL
grain: {batch_dim_environment: [environment_digest], batch_dim_protocol: [protocol_digest], batch_dim_workload: [workload_digest], batch_dim_implementation: [implementation_digest], batch_dim_operation: [operation_digest]}
creates: [batch_dim_environment, batch_dim_protocol, batch_dim_workload, batch_dim_implementation, batch_dim_operation]
depends_on: [batch_fact, batch_record, derived_environment, derived_implementation, derived_operation, derived_protocol, derived_workload, ki_environment, ki_implementation, ki_protocol, ki_workload]
*/
-- Dimension rows the batch brings: KernelIndex's own objects of its 'kernelindex' CSV rows, every
-- derived object, every object a record carried, and a 'referenced' row (digest and the attributes of
-- the facts using it, no object) for digests a record names without its object. The tables are
-- dictionaries keyed by digest: the merge appends digests not yet known (the whole object wins over a
-- bare reference).
create or replace temp table batch_dim_environment as
select digest as environment_digest, gpu_name, api_version, kind, object_json, 'kernelindex' as origin
from ki_environment
union all
-- distinct: environment.json files that differ beyond the toolchain (host, Python) make one object
select distinct digest, gpu_name, api_version, kind, object_json, 'derived' from derived_environment
union all
select
    environment_digest, min(gpu_name), any_value(json_extract_string(environment_json, '$.apiVersion')),
    any_value(json_extract_string(environment_json, '$.kind')), any_value(environment_json), 'kernelindex'
from batch_record
group by environment_digest;

create or replace temp table batch_dim_protocol as
select digest as protocol_digest, kernel_operation_mode, metric_name, metric_unit, api_version, kind, object_json,
       'kernelindex' as origin
from ki_protocol
union all
select digest, kernel_operation_mode, metric_name, metric_unit, api_version, kind, object_json, 'derived'
from derived_protocol
union all
select
    protocol_digest, min(kernel_operation_mode), 'speed', 'ms',
    any_value(json_extract_string(protocol_json, '$.apiVersion')),
    any_value(json_extract_string(protocol_json, '$.kind')), any_value(protocol_json), 'kernelindex'
from batch_record
group by protocol_digest;

create or replace temp table batch_dim_workload as
select digest as workload_digest, kernel_name, x_name, x_value, extra_config, api_version, kind, object_json,
       'kernelindex' as origin
from ki_workload
union all
select digest, kernel_name, x_name, x_value, extra_config, api_version, kind, object_json, 'derived'
from derived_workload
union all
select workload_digest, min(kernel_name), min(x_name), min(x_value), min(extra_config), null, null, null,
       'referenced'
from batch_fact
where workload_digest in (select workload_digest from batch_record)
group by workload_digest;

create or replace temp table batch_dim_implementation as
select digest as implementation_digest, kernel_name, kernel_provider, liger_version, api_version, kind, object_json,
       'kernelindex' as origin
from ki_implementation
union all
select digest, kernel_name, kernel_provider, liger_version, api_version, kind, object_json, 'derived'
from derived_implementation
union all
select implementation_digest, min(kernel_name), min(kernel_provider), min(liger_version), null, null, null,
       'referenced'
from batch_fact
where implementation_digest in (select implementation_digest from batch_record)
group by implementation_digest;

create or replace temp table batch_dim_operation as
select digest as operation_digest, kernel_name, api_version, kind, object_json, origin
from derived_operation;
