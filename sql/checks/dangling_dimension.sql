/* MODEL
name: dangling_dimension
kind: AUDIT
grain: [dimension, digest]
depends_on: [checked_facts, dim_environment, dim_protocol, dim_workload, dim_implementation]
*/
-- Offending rows: facts pointing at a dimension digest that no dimension table holds.
with facts as (
    select * from checked_facts
)
select 'environment' as dimension, f.environment_digest as digest from facts f
    anti join dim_environment d using (environment_digest)
union all
select 'protocol', f.protocol_digest from facts f anti join dim_protocol d using (protocol_digest)
union all
select 'workload', f.workload_digest from facts f anti join dim_workload d using (workload_digest)
union all
select 'implementation', f.implementation_digest from facts f anti join dim_implementation d using (implementation_digest);
