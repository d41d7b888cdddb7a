/* MODEL
name: learned_dimensions
creates: [all_record, learned_dimension]
depends_on: [batch_record, known_record]
*/
-- Learned dimensions, over every record the warehouse holds (earlier runs and this batch):
-- CSV rows take the environment of their GPU (all metrics) and the protocol of their
-- (timed pass, GPU) for ms rows only: records describe timing, not memory. Records that
-- disagree: the newest observedAt wins, ties go to the smallest digest.
create or replace temp table all_record as
select kernel_operation_mode, gpu_name, observed_at, protocol_digest, environment_digest from known_record
union all
select kernel_operation_mode, gpu_name, observed_at, protocol_digest, environment_digest from batch_record;

create or replace temp table learned_dimension as
select 'environment' as dimension, gpu_name, null::varchar as kernel_operation_mode, null::varchar as metric_unit,
       environment_digest as digest
from all_record
qualify row_number() over (partition by gpu_name order by observed_at desc, environment_digest) = 1
union all
select 'protocol', gpu_name, kernel_operation_mode, 'ms', protocol_digest
from all_record
qualify row_number() over (
    partition by kernel_operation_mode, gpu_name order by observed_at desc, protocol_digest
) = 1;
