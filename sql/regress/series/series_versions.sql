/* MODEL
name: series_versions
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, liger_version]
depends_on: [series_steps]
*/
-- series_versions: one row per series and version, summarizing EVERY run of it
-- (the version axis of series_steps, with its columns named for versions).
--
-- Series key, version order and the Liger-family rule: see ranked_measurements.
--   runs          how many runs (1 for most series)
--   p50           the median of the runs' p50
--   p50_min/max   the lowest and highest p50 of a run
--   spread_log    ln(p50_max / p50_min): how far the runs of this version disagree
--   p20, p80      the envelope band: the lowest p20 and the highest p80 of any run
--   observed_at   the latest run; first_observed_at the earliest.
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
    liger_version,
    version_rank,
    observed_at,
    first_observed_at,
    runs,
    p50,
    p50_min,
    p50_max,
    spread_log,
    p20,
    p80
from series_steps
where axis = 'version'
