-- Offending rows: facts whose quantiles are not positive and ordered p20 <= p50 <= p80.
with facts as (
    select * from fact_measurement
)
select measurement_digest, kernel_name, kernel_provider, gpu_name, liger_version, p20, p50, p80
from facts
where not (p20 > 0 and p20 <= p50 and p50 <= p80)
   or p20 is null or p50 is null or p80 is null;
