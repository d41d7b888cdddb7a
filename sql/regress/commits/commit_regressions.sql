/* MODEL
name: commit_regressions
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config, from_commit, to_commit]
depends_on: [alert_members, commit_range_changes, commit_ranges, verdicts]
*/
-- commit_regressions: one verdict per liger-family sweep on one GPU and pair of consecutive
-- benchmarked commits of that sweep (the commit axis of `verdicts`, judged by the same rule as
-- sweep_regressions).
--
-- A commit benchmarked twice is two runs of one step (from_runs / to_runs), never a pair.
--   from_commit / to_commit    the benchmarked commits (full sha when a clone resolved it)
--   from_release / to_release  the release a commit was benchmarked as, if any
--   from_version / to_version  liger_version at those commits
--   commits_between            commits of main in (from_commit, to_commit] (NULL without a clone)
--   source_changed             whether any of them touches src/liger_kernel/ (false: a re-run
--                              of the same code; NULL unknown)
--   kernel_changed             per kernel: whether any of them touches THIS kernel's source (the
--                              one rule, commit_range_changes.touches_kernel_of); false where
--                              source_changed is false, NULL where it is unknown, and
--                              source_changed where the range's commits are not listed
--   harness_changed            per kernel: whether any of them changes how THIS kernel is measured
--                              (its benchmark script, or a shared harness definition it uses:
--                              commit_range_changes.touches_harness_of); NULL where unknown
--   ratio, reference_ratio, normalized_ratio  geomeans over the shared x points
--   threshold, threshold_source, min_detectable_change  the measured noise it was judged by
--   alert_id                   the alert (alert_members) of a flagged row (regression, improvement,
--                              transient); NULL for the others
with sweep_rows as (
    select * from verdicts
    where verdicts.level = 'sweep' and verdicts.axis = 'commit'
),

kernel_touched as (
    select
        ranges.kernel_name,
        ranges.from_step_rank,
        ranges.to_step_rank,
        bool_or(coalesce(list_contains(commit_range_changes.touches_kernel_of, ranges.kernel_name), false))
            as touched,
        bool_or(coalesce(list_contains(commit_range_changes.touches_harness_of, ranges.kernel_name), false))
            as harness_touched
    from (select distinct kernel_name, from_step_rank, to_step_rank from sweep_rows) as ranges
    inner join commit_range_changes
        on commit_range_changes.range_order > ranges.from_step_rank
        and commit_range_changes.range_order <= ranges.to_step_rank
    group by ranges.kernel_name, ranges.from_step_rank, ranges.to_step_rank
)

select
    verdicts.kernel_name,
    verdicts.kernel_provider,
    verdicts.kernel_operation_mode,
    verdicts.metric_name,
    verdicts.metric_unit,
    verdicts.gpu_name,
    verdicts.x_name,
    verdicts.extra_config,
    verdicts.from_commit,
    verdicts.to_commit,
    verdicts.from_label as from_short_commit,
    verdicts.to_label as to_short_commit,
    verdicts.from_step_rank as from_commit_order,
    verdicts.to_step_rank as to_commit_order,
    verdicts.from_release,
    verdicts.to_release,
    verdicts.from_version,
    verdicts.to_version,
    range_to.commits_through - range_from.commits_through as commits_between,
    case
        when range_to.kernel_changes_through is null or range_from.kernel_changes_through is null
            or range_to.kernel_unknown_through > range_from.kernel_unknown_through
            then cast(null as boolean)
        when range_to.kernel_changes_through > range_from.kernel_changes_through then true
        else false
    end as source_changed,
    case
        when range_to.kernel_changes_through is null or range_from.kernel_changes_through is null
            or range_to.kernel_unknown_through > range_from.kernel_unknown_through
            then cast(null as boolean)
        when range_to.kernel_changes_through = range_from.kernel_changes_through then false
        else coalesce(kernel_touched.touched, true)
    end as kernel_changed,
    case
        when range_to.kernel_unknown_through is null or range_from.kernel_unknown_through is null
            or range_to.kernel_unknown_through > range_from.kernel_unknown_through
            then cast(null as boolean)
        else coalesce(kernel_touched.harness_touched, false)
    end as harness_changed,
    verdicts.from_runs,
    verdicts.to_runs,
    verdicts.from_spread,
    verdicts.to_spread,
    verdicts.points as shared_points,
    verdicts.points_banded,
    verdicts.band_fraction,
    verdicts.ratio,
    verdicts.reference_providers,
    verdicts.reference_ratio,
    verdicts.normalized_ratio,
    verdicts.threshold,
    verdicts.noise_scope,
    verdicts.threshold_source,
    verdicts.min_detectable_change,
    verdicts.verdict,
    verdicts.reason,
    alert_members.alert_id
from sweep_rows as verdicts
left join kernel_touched
    on kernel_touched.kernel_name = verdicts.kernel_name
    and kernel_touched.from_step_rank = verdicts.from_step_rank
    and kernel_touched.to_step_rank = verdicts.to_step_rank
left join commit_ranges as range_from
    on range_from.commit_order = verdicts.from_step_rank
left join commit_ranges as range_to
    on range_to.commit_order = verdicts.to_step_rank
left join alert_members
    on alert_members.axis = 'commit'
    and alert_members.kernel_name = verdicts.kernel_name
    and alert_members.kernel_provider = verdicts.kernel_provider
    and alert_members.kernel_operation_mode = verdicts.kernel_operation_mode
    and alert_members.metric_name = verdicts.metric_name
    and alert_members.gpu_name = verdicts.gpu_name
    and alert_members.x_name is not distinct from verdicts.x_name
    and alert_members.extra_config is not distinct from verdicts.extra_config
    and alert_members.to_order = verdicts.to_step_rank
