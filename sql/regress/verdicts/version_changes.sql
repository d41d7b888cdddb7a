/* MODEL
name: version_changes
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, from_version, to_version]
depends_on: [step_changes]
*/
-- version_changes: each pair of consecutive versions of each series, all providers
-- (the version axis of step_changes, with its columns named for versions).
--
-- Consecutive means consecutive among the versions this series was measured
-- at, in PEP 440 order (version_rank), never text order. Both sides summarize
-- every run of their version: p50 is the median of the runs, p20/p80 the
-- envelope band, *_runs the number of runs, *_spread_log how far those runs
-- disagree. ratio > 1 is "worse"; bands_separated: the bands of every run of
-- one version clear the bands of every run of the other.
select
    kernel_name,
    kernel_provider,
    is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    from_version,
    to_version,
    from_version_rank,
    to_version_rank,
    from_observed_at,
    to_observed_at,
    from_p20,
    from_p50,
    from_p80,
    to_p20,
    to_p50,
    to_p80,
    from_runs,
    to_runs,
    from_spread_log,
    to_spread_log,
    ratio,
    log_ratio,
    direction,
    bands_separated
from step_changes
where axis = 'version'
