-- How much was rejected, and why, per file.
create or replace view quarantine_by_reason as
with rejected as (
    select * from quarantine
)
select reason, source_file, count(*) as rows
from rejected
group by all
order by reason, source_file;
