/* MODEL
name: sweep_regressions
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, from_version, to_version]
depends_on: [alert_members, liger_versions, sweep_pair_verdicts]
*/
-- sweep_regressions: the headline list -- one verdict per liger-family sweep and version pair.
--
-- The sweep rows of `verdicts` on the version axis (where the rule and its reasons live), with the
-- point verdicts of the same pair counted beside them. geomean_ratio is the
-- geometric mean over the x points both versions measured of
-- median-of-runs to / median-of-runs from; from_runs / to_runs say how many
-- runs each side had (the most any point had), from_spread / to_spread how far
-- they disagree (geomean over the points measured more than once).
-- is_newest: to_version is the newest version measured anywhere.
-- alert_id: the alert (alert_members) of a flagged pair where no commit is known for it; NULL for
-- the others (a pair the commit axis covers is alerted there, on commit_regressions).
-- The pairs are stored per step (sweep_pair_verdicts); is_newest and alert_id move with every run
-- whatever it touched, so they are joined here, over a few rows of alert_members.
select
    pairs.kernel_name,
    pairs.kernel_provider,
    pairs.kernel_operation_mode,
    pairs.metric_name,
    pairs.metric_unit,
    pairs.gpu_name,
    pairs.x_name,
    pairs.extra_config,
    pairs.from_version,
    pairs.to_version,
    pairs.from_version_rank,
    pairs.to_version_rank,
    pairs.to_version_rank = (select max(version_rank) from liger_versions) as is_newest,
    pairs.from_runs,
    pairs.to_runs,
    pairs.from_spread,
    pairs.to_spread,
    pairs.shared_points,
    pairs.reference_points,
    pairs.reference_providers,
    pairs.geomean_ratio,
    pairs.geomean_reference_ratio,
    pairs.geomean_normalized_ratio,
    pairs.points_regressed,
    pairs.points_improved,
    pairs.points_drift,
    pairs.points_unstable,
    pairs.points_bands_worse,
    pairs.points_bands_better,
    pairs.band_fraction,
    pairs.threshold,
    pairs.noise_scope,
    pairs.threshold_source,
    pairs.min_detectable_change,
    pairs.verdict,
    pairs.reason,
    alert_members.alert_id
from sweep_pair_verdicts as pairs
left join alert_members
    on alert_members.axis = 'version'
    and alert_members.kernel_name = pairs.kernel_name
    and alert_members.kernel_provider = pairs.kernel_provider
    and alert_members.kernel_operation_mode = pairs.kernel_operation_mode
    and alert_members.metric_name = pairs.metric_name
    and alert_members.gpu_name = pairs.gpu_name
    and alert_members.x_name is not distinct from pairs.x_name
    and alert_members.extra_config is not distinct from pairs.extra_config
    and alert_members.to_order = pairs.to_version_rank
