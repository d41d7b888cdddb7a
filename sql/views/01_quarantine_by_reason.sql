-- How much was rejected, and why, per file.
create or replace view quarantine_by_reason as
select reason, source_file, count(*) as rows
from quarantine
group by reason, source_file
order by reason, source_file
