/* MODEL
name: derived_dimensions
creates: [derived_environment_key, derived_protocol_key, derived_workload_key, derived_implementation_key]
depends_on: [csv_fact]
*/
-- Derived dimensions: every distinct key the batch's CSV facts need an object for. The driver
-- builds each object once per key in Python (pipeline.core.dimensions: the same pydantic models
-- and digest rule as kernelindex objects) and registers derived_environment, derived_protocol,
-- derived_workload and derived_implementation with a `digest` column beside these keys.
create or replace temp table derived_environment_key as
select distinct gpu_name from csv_fact;

create or replace temp table derived_protocol_key as
select distinct kernel_operation_mode, metric_name, metric_unit from csv_fact;

create or replace temp table derived_workload_key as
select distinct kernel_name, x_name, x_value, extra_config from csv_fact;

create or replace temp table derived_implementation_key as
select distinct kernel_name, kernel_provider, liger_version from csv_fact;
