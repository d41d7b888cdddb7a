/* MODEL
name: derived_dimensions
kind: FULL
grain: {derived_environment_key: [gpu_name, source_environment], derived_protocol_key: [kernel_operation_mode, metric_name, metric_unit], derived_workload_key: [kernel_name, x_name, x_value, extra_config], derived_implementation_key: [kernel_name, kernel_provider, liger_version], derived_operation_key: [kernel_name]}
creates: [derived_environment_key, derived_protocol_key, derived_workload_key, derived_implementation_key, derived_operation_key]
depends_on: [batch_record, csv_fact]
*/
-- Derived dimensions: every distinct key the batch's derived CSV facts (identity 'derived': rows
-- KernelIndex does not map) need an object for. The driver builds each object once per key in Python
-- (pipeline.model.dimensions: the same digest rule as kernelindex objects) and registers
-- derived_environment, derived_protocol, derived_workload, derived_implementation and
-- derived_operation with a `digest` column beside these keys. Operations: one per kernel of every
-- fact and record (KernelIndex's OperationSpec for a curated kernel, else a minimal one).
-- Environments: per GPU and the environment.json of the value's source (a commit run's; none for
-- upstream's CSVs), whose toolchain fills `spec.software` (dimensions.toolchain), so runs under
-- another torch or Triton get another environment digest. Staging is per file content and never sees it.
create or replace temp table derived_environment_key as
select distinct gpu_name, source_environment from csv_fact where identity = 'derived';

create or replace temp table derived_protocol_key as
select distinct kernel_operation_mode, metric_name, metric_unit from csv_fact where identity = 'derived';

create or replace temp table derived_workload_key as
select distinct kernel_name, x_name, x_value, extra_config from csv_fact where identity = 'derived';

create or replace temp table derived_implementation_key as
select distinct kernel_name, kernel_provider, liger_version from csv_fact where identity = 'derived';

create or replace temp table derived_operation_key as
select kernel_name from csv_fact
union
select kernel_name from batch_record;
