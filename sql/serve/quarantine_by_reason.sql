/* MODEL
name: quarantine_by_reason
kind: VIEW
grain: [source_file, reason]
depends_on: [quarantine]
*/
-- How much was rejected, and why, per file.
select reason, source_file, count(*) as rows
from quarantine
group by reason, source_file
order by reason, source_file
