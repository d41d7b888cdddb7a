/* MODEL
name: fold
kind: FULL
grain: [measurement_digest]
depends_on: [batch_record, csv_fact]
*/
-- Record fold: a record becomes the kernelindex twin of a CSV fact
--   1. 'run digest': the record's run digest is the one KernelIndex makes from the row;
--   2. 'externalId': else the record's externalId is the row's;
--   3. 'heuristic': only for a record that matches no row by 1 or 2
--      (contracts/rules.py fold_heuristic_sql: kernel, pass, provider, GPU, the time to the second and
--      the three quantiles agree, relative 1e-9, ms rows only).
-- Tie-breaks: a record matching several rows takes the best rule, then the smallest measurement
-- digest; a row matched by several records the best rule, then the smallest (workload,
-- implementation, protocol, environment) digests. {record_key}: what makes a record one
-- (contracts/rules.py RECORD_KEY; the merge appends the records the warehouse lacks by the same key).
create or replace temp table fold as
with exact as (
    select f.measurement_digest, r.*, 1 as rule_rank
    from csv_fact as f
    inner join batch_record as r on f.run_digest = r.run_digest
    union all
    select f.measurement_digest, r.*, 2 as rule_rank
    from csv_fact as f
    inner join batch_record as r on f.external_id = r.external_id
),

loose as (
    select * from batch_record as r
    anti join exact as e using ({record_key})
),

heuristic as (
    select f.measurement_digest, r.*, 3 as rule_rank
    from csv_fact as f
    inner join loose as r on {fold_heuristic}
),

one_fact_per_record as (
    select *
    from (select * from exact union all select * from heuristic)
    qualify row_number() over (
        partition by {record_key}
        order by rule_rank, measurement_digest
    ) = 1
)

select
    * exclude (rule_rank),
    case rule_rank when 1 then 'run digest' when 2 then 'externalId' else 'heuristic' end as fold_rule
from one_fact_per_record
qualify row_number() over (
    partition by measurement_digest
    order by rule_rank, workload_digest, implementation_digest, protocol_digest, environment_digest
) = 1;
