/* MODEL
name: regressions
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, x_value, from_version, to_version]
depends_on: [verdicts]
*/
-- regressions: one verdict per liger-family series and consecutive version pair.
--
-- The point rows of `verdicts` on the version axis (where the rule and its reasons live). ratio =
-- to_p50 / from_p50 over the medians of every run of each version; from_runs /
-- to_runs say how many runs each side had, from_spread / to_spread how far
-- they disagree (p50_max / p50_min, 1 for a single run).
select
    kernel_name,
    kernel_provider,
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
    from_spread,
    to_spread,
    ratio,
    ln(ratio) as log_ratio,
    case when ratio > 1 then 'worse' when ratio < 1 then 'better' else 'equal' end as direction,
    points_banded = 1 as bands_separated,
    reference_providers,
    reference_count,
    reference_ratio,
    normalized_ratio,
    ln(normalized_ratio) as log_normalized_ratio,
    threshold,
    threshold_log,
    noise_scope,
    threshold_source,
    min_detectable_change,
    raw_beyond_noise,
    reference_confirms,
    verdict,
    reason
from verdicts
where level = 'point' and axis = 'version'
