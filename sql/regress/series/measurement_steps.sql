/* MODEL
name: measurement_steps
kind: VIEW
grain: [measurement_digest]
fact_columns: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, x_value, extra_config]
fact_steps:
  columns: [axis_key]
  sql: >-
    select t.*, o.liger_version, null::varchar as snapshot
    from touched t join liger_version_order o on t.axis_key = 'v:' || o.version_rank
    union all
    select t.*, null, s.snapshot from touched t join benchmark_snapshot s on t.axis_key = 'c:' || s.commit
depends_on: [measurements]
*/
-- measurement_steps: every measurement with a positive p50 and an orderable Liger version, placed
-- on the dashboard's x axis: axis_key is its benchmarked commit ('c:<sha>') when one is known,
-- else its version ('v:<version_rank>': upstream's main CSVs, our own runs). A run of a known
-- commit is never pooled with commit-less runs of the same version.
select
    measurements.*,
    case
        when measurements.benchmarked_commit is null then 'v:' || measurements.version_rank
        else 'c:' || measurements.benchmarked_commit
    end as axis_key
from measurements
where measurements.version_rank is not null and measurements.p50 > 0
