/* MODEL
name: fold
depends_on: [batch_record, csv_fact]
*/
-- Record fold: a record becomes the kernelindex twin of a CSV fact when kernel, pass, provider,
-- GPU, timestamp (to the second) and the three quantiles agree (relative 1e-9; ms rows only).
-- Tie-breaks: a record matching several rows picks the smallest measurement digest; a row
-- matched by several records picks the smallest (workload, implementation, protocol,
-- environment) digests. {record_key}: what makes a record one (contracts/rules.py RECORD_KEY; the
-- merge appends the records the warehouse lacks by the same key).
create or replace temp table fold as
with candidates as (
    select f.measurement_digest, r.*
    from csv_fact as f
    inner join batch_record as r
        on f.kernel_name = r.kernel_name
        and f.kernel_operation_mode = r.kernel_operation_mode
        and f.kernel_provider is not distinct from r.kernel_provider
        and f.gpu_name = r.gpu_name
        and f.observed_at_text = r.observed_at_text
        and f.metric_unit = 'ms'
        and abs(f.p20 - r.p20) <= 1e-9 * r.p20
        and abs(f.p50 - r.p50) <= 1e-9 * r.p50
        and abs(f.p80 - r.p80) <= 1e-9 * r.p80
),

one_fact_per_record as (
    select *
    from candidates
    qualify row_number() over (
        partition by {record_key}
        order by measurement_digest
    ) = 1
)

select *
from one_fact_per_record
qualify row_number() over (
    partition by measurement_digest
    order by workload_digest, implementation_digest, protocol_digest, environment_digest
) = 1;
