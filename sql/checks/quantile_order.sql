/* MODEL
name: quantile_order
kind: AUDIT
grain: [measurement_digest]
depends_on: [checked_facts]
*/
-- Offending rows: facts whose quantiles break the readers' rule (finite, positive, p20 <= p50 <= p80).
-- quantile_reason() is that rule (pipeline/contracts/rules.py), a macro the check connection registers.
with facts as (
    select * from checked_facts
)
select measurement_digest, kernel_name, kernel_provider, gpu_name, liger_version, p20, p50, p80
from facts
where quantile_reason(p20, p50, p80) is not null;
