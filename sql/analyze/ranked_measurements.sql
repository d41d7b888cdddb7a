/* MODEL
name: ranked_measurements
depends_on: [measurements]
*/
-- ranked_measurements: every measurement that takes part in version comparisons,
-- with its series key, its family and its run recency. The one place for:
--   * the series key: kernel_name, kernel_provider, kernel_operation_mode,
--     metric_name, gpu_name, x_name, x_value, extra_config (a sweep is a series
--     without x_value);
--   * the version order: version_rank (PEP 440); versions that are not PEP 440
--     (rank NULL) sort nowhere and are left out, and so are p50s that are not
--     positive (no ratio can be formed);
--   * the Liger-family rule: is_liger = the provider name starts with 'liger'
--     (liger, liger_triton, liger_cutile, ...); the others (torch, huggingface,
--     ...) are references;
--   * runs: runs_at_version = how many runs measured this series at this
--     version; run_recency = 1 for the latest of them (observed_at, then digest).
-- Every run takes part in the verdicts; run_recency only names the latest.
select
    measurement_digest,
    kernel_name,
    kernel_provider,
    starts_with(kernel_provider, 'liger') as is_liger,
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
    p20,
    p50,
    p80,
    count(*) over series_version as runs_at_version,
    row_number() over (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config, version_rank
        order by observed_at desc nulls last, measurement_digest desc
    ) as run_recency
from measurements
where version_rank is not null
    and p50 > 0
window series_version as (
    partition by
        kernel_name, kernel_provider, kernel_operation_mode, metric_name,
        gpu_name, x_name, x_value, extra_config, version_rank
)
