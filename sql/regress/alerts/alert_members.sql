/* MODEL
name: alert_members
kind: FULL
grain: [alert_id, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, from_label, to_label]
depends_on: [verdicts]
*/
-- alert_members: every flagged sweep pair and the alert it belongs to (one row per pair).
-- Stored (FULL), not a view: five models, the run summary, the report and the dashboard read it, and
-- as a view each of them grouped every flagged pair of the history again (bench/HISTORY.md, issue 57).
--
-- Flagged: a sweep verdict of `regression`, `improvement` or `transient` (both pairs of an
-- excursion). On the commit axis every such pair; on the version axis only where no commit is known
-- for it: a version pair whose sweep has no commit-axis pair on that GPU ending at that version.
--   direction   regression (ratio > 1: slower or hungrier) / improvement
--   role        'step', or 'taken back' for the second pair of an excursion (a transient pair that
--               takes back the transient pair just before it): it joins the alert of that first
--               pair, with its range and direction, so one excursion is one alert
--   anchor_from_order / anchor_to_order   the range the pair is grouped by (its own, or for a
--               'taken back' pair the first pair's); anchor_from / anchor_to: its ends, full commits
--               (the short label where no clone resolved one) or versions
-- kind        'transient' for the pairs of a one-step excursion (verdict transient), else 'step'
-- Grouping: per axis, GPU and direction, pairs ordered by their anchor range; a pair whose range
-- (from, to] overlaps the ranges before it (from < the largest `to` so far) joins their alert,
-- else it opens the next one. Excursions and steps of one range are one alert (issue 54: the
-- 5057ca8..e6f84b8 improvement was a transient alert of 13 kernels beside an open one of 6); each
-- member keeps its own status (alert_member_status), the alert's follows from them (alert_groups).
-- So no two alerts share axis, GPU, direction and an overlapping range.
-- alert_id: 'A-' and 12 hex digits of md5(axis, GPU, direction, the group's first range as full
-- commits or versions): content, not a counter, so every rebuild gives the same id. A new pair
-- with a range before the group's first (a sweep skipping snapshots) gives the group a new id.
with chained as (
    select
        v.*,
        case when v.ratio > 1 then 'regression' else 'improvement' end as direction,
        lag(v.verdict) over sweep_chain as previous_verdict,
        lag(v.ratio) over sweep_chain as previous_ratio,
        lag(v.to_step_rank) over sweep_chain as previous_to_rank,
        lag(v.from_step_rank) over sweep_chain as previous_from_rank,
        lag(v.from_label) over sweep_chain as previous_from_label,
        lag(v.to_label) over sweep_chain as previous_to_label,
        lag(v.from_commit) over sweep_chain as previous_from_commit,
        lag(v.to_commit) over sweep_chain as previous_to_commit,
        lag(v.from_version) over sweep_chain as previous_from_version,
        lag(v.to_version) over sweep_chain as previous_to_version
    from verdicts as v
    where v.level = 'sweep'
    window sweep_chain as (
        partition by
            v.axis, v.kernel_name, v.kernel_provider, v.kernel_operation_mode, v.metric_name,
            v.gpu_name, v.x_name, v.extra_config
        order by v.to_step_rank
    )
),

commit_covered as (
    select distinct
        kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
        extra_config, to_version
    from verdicts
    where level = 'sweep' and axis = 'commit'
),

flagged as (
    select
        chained.*,
        coalesce(
            chained.verdict = 'transient' and chained.previous_verdict = 'transient'
            and chained.previous_to_rank = chained.from_step_rank
            and (chained.previous_ratio > 1) <> (chained.ratio > 1),
            false
        ) as follows_excursion
    from chained
    left join commit_covered
        on chained.axis = 'version'
        and commit_covered.kernel_name = chained.kernel_name
        and commit_covered.kernel_provider = chained.kernel_provider
        and commit_covered.kernel_operation_mode = chained.kernel_operation_mode
        and commit_covered.metric_name = chained.metric_name
        and commit_covered.gpu_name = chained.gpu_name
        and commit_covered.x_name is not distinct from chained.x_name
        and commit_covered.extra_config is not distinct from chained.extra_config
        and commit_covered.to_version = chained.to_version
    where chained.verdict in ('regression', 'improvement', 'transient')
        and (chained.axis = 'commit' or commit_covered.gpu_name is null)
),

-- A sweep flipping every week (up, back, up, back) is a run of transient pairs each following the
-- one before: its 1st, 3rd ... pairs open an excursion, its 2nd, 4th ... take one back. A pair that
-- took back a take-back would anchor an alert with no step of its own (upstream's full history:
-- fused_linear_cross_entropy up at 2845fe8, back at 009401c, up again at 77a4c1a; issue 42).
excursion_runs as (
    select
        flagged.*,
        sum(case when follows_excursion then 0 else 1 end) over sweep_flags as excursion_run
    from flagged
    window sweep_flags as (
        partition by
            axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
            extra_config
        order by to_step_rank
        rows between unbounded preceding and current row
    )
),

taking_back as (
    select
        excursion_runs.*,
        follows_excursion and row_number() over (
            partition by
                axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name,
                extra_config, excursion_run
            order by to_step_rank
        ) % 2 = 0 as takes_back
    from excursion_runs
),

anchored as (
    select
        taking_back.*,
        case when takes_back then 'taken back' else 'step' end as role,
        case when verdict = 'transient' then 'transient' else 'step' end as kind,
        case
            when takes_back then case when previous_ratio > 1 then 'regression' else 'improvement' end
            else direction
        end as alert_direction,
        case when takes_back then previous_from_rank else from_step_rank end as anchor_from_order,
        case when takes_back then previous_to_rank else to_step_rank end as anchor_to_order,
        case
            when axis = 'commit' then coalesce(
                case when takes_back then previous_from_commit else from_commit end,
                case when takes_back then previous_from_label else from_label end
            )
            else case when takes_back then previous_from_version else from_version end
        end as anchor_from,
        case
            when axis = 'commit' then coalesce(
                case when takes_back then previous_to_commit else to_commit end,
                case when takes_back then previous_to_label else to_label end
            )
            else case when takes_back then previous_to_version else to_version end
        end as anchor_to
    from taking_back
),

opened as (
    select
        anchored.*,
        case
            when anchor_from_order < max(anchor_to_order) over (
                partition by axis, gpu_name, alert_direction
                order by anchor_from_order, anchor_to_order, kernel_name, kernel_provider,
                    kernel_operation_mode, metric_name, x_name, extra_config, to_step_rank
                rows between unbounded preceding and 1 preceding
            ) then 0
            else 1
        end as opens_alert
    from anchored
),

grouped as (
    select
        opened.*,
        sum(opens_alert) over (
            partition by axis, gpu_name, alert_direction
            order by anchor_from_order, anchor_to_order, kernel_name, kernel_provider,
                kernel_operation_mode, metric_name, x_name, extra_config, to_step_rank
            rows between unbounded preceding and current row
        ) as alert_number
    from opened
),

first_range as (
    -- exactly one pair opens each alert: the first in the order above
    select axis, gpu_name, alert_direction, alert_number, anchor_from as first_from, anchor_to as first_to
    from grouped
    where opens_alert = 1
)

select
    'A-' || substr(md5(
        grouped.axis || '|' || grouped.gpu_name || '|' || grouped.alert_direction || '|'
        || first_range.first_from || '|' || first_range.first_to
    ), 1, 12) as alert_id,
    grouped.axis,
    grouped.gpu_name,
    grouped.alert_direction as direction,
    grouped.kind,
    grouped.role,
    grouped.kernel_name,
    grouped.kernel_provider,
    grouped.kernel_operation_mode,
    grouped.metric_name,
    grouped.metric_unit,
    grouped.x_name,
    grouped.extra_config,
    grouped.from_label,
    grouped.to_label,
    grouped.from_step_rank as from_order,
    grouped.to_step_rank as to_order,
    grouped.anchor_from_order,
    grouped.anchor_to_order,
    grouped.anchor_from,
    grouped.anchor_to,
    grouped.from_commit,
    grouped.to_commit,
    grouped.from_release,
    grouped.to_release,
    grouped.from_version,
    grouped.to_version,
    grouped.ratio,
    grouped.reference_providers,
    grouped.reference_ratio,
    grouped.normalized_ratio,
    grouped.threshold,
    grouped.threshold_log,
    grouped.verdict
from grouped
inner join first_range
    on first_range.axis = grouped.axis
    and first_range.gpu_name = grouped.gpu_name
    and first_range.alert_direction = grouped.alert_direction
    and first_range.alert_number = grouped.alert_number
