/* MODEL
name: noise_judged
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [scope, gpu_name, metric_name, duration_bucket, trusted]
partitions_from: noise_floor
grain: [metric_name, gpu_name, scope, duration_bucket]
keep_while: >-
  abs(n.threshold_log - k.threshold_log)
  < (select noise_tolerance from regression_settings) * k.threshold_log
run_column: judged_at_run
depends_on: [noise_floor]
*/
-- noise_judged: the noise the verdicts are judged against -- `noise_floor` as it was measured when
-- its pairs were last judged, with the run it was computed at (judged_at_run, stamped by the build;
-- NULL where the models are views, which judge against the noise of now).
--
-- Noise is a versioned input, not a reason to judge every pair again: each new run moves the
-- measured noise a little, and re-judging every pair of every GPU for it made `verdicts` the
-- costliest model of one new run at depth (docs/regressions.md). An incremental build keeps a
-- row (GPU, metric, scope, duration bucket) as judged while its new threshold differs by less than
-- noise_tolerance of the judged one (regression_settings); a row beyond it, or one that became
-- trusted or untrusted (the key holds `trusted`), new or gone, is taken as measured now, and the
-- pairs it reaches are judged again (`moved_by` in verdicts). A full build takes every row as
-- measured now.
select
    scope,
    kernel_name,
    kernel_provider,
    kernel_operation_mode,
    metric_name,
    gpu_name,
    duration_bucket,
    duration_label,
    rerun_points,
    rerun_sweeps,
    same_commit_sweeps,
    no_kernel_change_sweeps,
    same_version_sweeps,
    trusted,
    median_rel_spread,
    noise_rel_spread,
    threshold,
    threshold_log,
    floor_applied,
    threshold_source,
    cast(null as bigint) as judged_at_run
from noise_floor
