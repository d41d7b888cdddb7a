/* MODEL
name: alert_groups
kind: FULL
grain: [alert_id]
depends_on: [alert_harness, alert_kernels, alert_member_status, alert_members, alert_suspects, alert_toolchain, commit_change, commit_ranges, series_steps, verdicts]
*/
-- alert_groups: one row per alert (alert_members grouped by alert_id), with its cause, the evidence
-- for it and its status as the data alone says it (`alerts` adds what people said: acknowledged).
--   from_* / to_*     the alert's range: the earliest `from` and the latest `to` of its pairs
--   sweeps, kernels, kernel_names, metrics   distinct flagged sweeps, kernels, metrics ('step' pairs)
--   worst_ratio       the largest ratio of a regression, the smallest of an improvement
--   median_ratio      median over the alert's 'step' pairs
-- cause (the rule; alert_kernels.cause per kernel: code when a commit in range touches its source
-- (touches_kernel), else harness when one changes how it is measured (touches_harness), else
-- environment):
--   code         every flagged kernel's is code
--   harness      every flagged kernel's is harness
--   environment  every flagged kernel's is environment
--   mixed        they differ; cause_evidence names which kernels fall under which
--   unknown      a kernel's commits are not known (no clone; the version axis)
--   harness_suspects / harness_text  commits changing a flagged kernel's harness, and what they
--                changed ('c2f4c02 (benchmark_dyt.py, utils.py:run_speed_benchmark)')
-- evidence:
--   launch_bound_sweeps  speed sweeps whose liger p50 at the `to` step is short and flat across x
--                        (the is_launch_bound rule, pipeline/outputs/report/launch.py: median
--                        < 0.5 ms, max/min <= 3.5 over >= 3 points)
--   references_measured / references_moved  'step' pairs with a reference beside them / whose
--                        reference moved beyond noise the same way
--   bimodal_sweeps, bimodal_seen_at  sweeps that made the same jump (same direction, log ratio
--                        within the pair's noise of this one) at another pair outside the alert on
--                        code known unchanged (no commit in its range touches the kernel): a
--                        sweep flipping between two levels; seen_at names those pairs' `to` commits
-- status (before acknowledgement), from its members' own (alert_member_status):
--   transient    every member is a pair of a one-step excursion (kind 'transient')
--   recovered    a later pair beyond noise the other way takes back more than half of its sweeps
--                (an excursion's sweeps are taken back by their second pair); recovered_at is the
--                step where that majority is reached
--   redefined    otherwise, when every step member not taken back is 'redefined': its sweep ends
--                where its kernel's series were redefined (series_lineage), so it can never
--                recover; redefined_text names where and by which harness commit
--   open         otherwise
-- kind: 'transient' when every member is an excursion's pair, else 'step'
with steps as (
    select * from alert_members where role = 'step'
),

ranged as (
    select
        alert_id,
        any_value(axis) as axis,
        any_value(gpu_name) as gpu_name,
        any_value(direction) as direction,
        case when bool_and(kind = 'transient') then 'transient' else 'step' end as kind,
        min(anchor_from_order) as from_order,
        max(anchor_to_order) as to_order,
        -- an order names one commit (or version), so these take no side of a tie
        arg_min(anchor_from, anchor_from_order) as from_point,
        arg_max(anchor_to, anchor_to_order) as to_point,
        md5(array_to_string(list_sort(list(
            kernel_name || '/' || kernel_provider || '/' || kernel_operation_mode || '/' || metric_name
            || '/' || coalesce(x_name, '') || '/' || coalesce(extra_config, '') || '@'
            || cast(to_order as varchar)
        )), ';')) as members_digest,
        count(*) as pairs
    from alert_members
    group by alert_id
),

sweep_rows as (
    select
        alert_id,
        count(*) as step_pairs,
        count(distinct kernel_name || '/' || kernel_provider || '/' || kernel_operation_mode || '/'
            || metric_name || '/' || coalesce(x_name, '') || '/' || coalesce(extra_config, '')) as sweeps,
        count(distinct kernel_name) as kernels,
        list_sort(list_distinct(list(kernel_name))) as kernel_names,
        list_sort(list_distinct(list(metric_name))) as metrics,
        case when any_value(direction) = 'regression' then max(ratio) else min(ratio) end as worst_ratio,
        median(ratio) as median_ratio,
        count(reference_ratio) as references_measured,
        count(
            case
                when abs(ln(reference_ratio)) > threshold_log
                    and (reference_ratio > 1) = (ratio > 1) then 1
            end
        ) as references_moved
    from steps
    group by alert_id
),

kernel_change as (
    select
        alert_id,
        count(*) as kernels_judged,
        count(case when kernel_changed then 1 end) as kernels_changed,
        count(case when kernel_changed is null then 1 end) as kernels_unknown,
        list_sort(list_distinct(list(case when kernel_changed then kernel_name end))) as changed_kernels,
        count(case when cause = 'harness' then 1 end) as kernels_harness,
        list_sort(list_distinct(list(case when cause = 'harness' then kernel_name end))) as harness_kernels,
        list_sort(list_distinct(list(case when cause = 'environment' then kernel_name end)))
            as environment_kernels
    from alert_kernels
    group by alert_id
),

suspect_list as (
    select
        alert_id,
        list_sort(list("commit")) as suspects,
        array_to_string(list_sort(list(short_commit)), ', ') as suspect_text
    from alert_suspects
    group by alert_id
),

harness_list as (
    select
        alert_id,
        list_sort(list("commit")) as harness_suspects,
        array_to_string(list_sort(list(
            short_commit || ' (' || harness_files || ')'
        )), '; ') as harness_text
    from alert_harness
    group by alert_id
),

member_states as (
    select
        alert_id,
        count(case when member_status = 'persisting' then 1 end) as persisting_pairs,
        count(case when member_status = 'redefined' then 1 end) as redefined_pairs,
        array_to_string(list_sort(list_distinct(list(
            case when member_status = 'redefined'
                then redefined_at || ' (' || coalesce(redefined_by, 'no commit in range changes its harness') || ')'
            end
        ))), '; ') as redefined_text
    from alert_member_status
    group by alert_id
),

launch as (
    select
        steps.alert_id,
        steps.kernel_name,
        steps.kernel_provider,
        steps.kernel_operation_mode,
        steps.metric_name,
        steps.x_name,
        steps.extra_config,
        steps.to_order,
        coalesce(
            steps.metric_name = 'speed' and any_value(series_steps.metric_unit) = 'ms'
            and count(*) >= 3
            and median(series_steps.p50) < 0.5
            and max(series_steps.p50) / min(series_steps.p50) <= 3.5,
            false
        ) as launch_bound
    from steps
    inner join series_steps
        on series_steps.axis = steps.axis
        and series_steps.step_rank = steps.to_order
        and series_steps.kernel_name = steps.kernel_name
        and series_steps.kernel_provider = steps.kernel_provider
        and series_steps.kernel_operation_mode = steps.kernel_operation_mode
        and series_steps.metric_name = steps.metric_name
        and series_steps.gpu_name = steps.gpu_name
        and series_steps.x_name is not distinct from steps.x_name
        and series_steps.extra_config is not distinct from steps.extra_config
        and series_steps.p50 > 0
    group by
        steps.alert_id, steps.kernel_name, steps.kernel_provider, steps.kernel_operation_mode,
        steps.metric_name, steps.x_name, steps.extra_config, steps.to_order
),

launch_counts as (
    select alert_id, count(case when launch_bound then 1 end) as launch_bound_pairs
    from launch
    group by alert_id
),

-- every later or other pair of the alert's sweeps, beside the alert's own pairs
same_sweep as (
    select
        steps.alert_id,
        steps.kernel_name,
        steps.kernel_provider,
        steps.kernel_operation_mode,
        steps.metric_name,
        steps.x_name,
        steps.extra_config,
        steps.ratio as own_ratio,
        steps.threshold_log as own_threshold_log,
        other.from_step_rank as other_from_order,
        other.to_step_rank as other_to_order,
        other.to_label as other_to_label,
        other.ratio as other_ratio,
        other.raw_beyond_noise as other_beyond_noise
    from steps
    inner join verdicts as other
        on other.level = 'sweep'
        and other.axis = steps.axis
        and other.kernel_name = steps.kernel_name
        and other.kernel_provider = steps.kernel_provider
        and other.kernel_operation_mode = steps.kernel_operation_mode
        and other.metric_name = steps.metric_name
        and other.gpu_name = steps.gpu_name
        and other.x_name is not distinct from steps.x_name
        and other.extra_config is not distinct from steps.extra_config
        and other.to_step_rank <> steps.to_order
),

taken_back as (
    select
        same_sweep.alert_id,
        same_sweep.kernel_name,
        same_sweep.kernel_provider,
        same_sweep.kernel_operation_mode,
        same_sweep.metric_name,
        same_sweep.x_name,
        same_sweep.extra_config,
        min(same_sweep.other_to_order) as back_order
    from same_sweep
    inner join ranged on ranged.alert_id = same_sweep.alert_id
    where same_sweep.other_beyond_noise
        and same_sweep.other_from_order >= ranged.to_order
        and (same_sweep.other_ratio > 1) <> (same_sweep.own_ratio > 1)
    group by
        same_sweep.alert_id, same_sweep.kernel_name, same_sweep.kernel_provider,
        same_sweep.kernel_operation_mode, same_sweep.metric_name, same_sweep.x_name,
        same_sweep.extra_config
),

taken_back_ranked as (
    select
        taken_back.alert_id,
        taken_back.back_order,
        row_number() over (partition by taken_back.alert_id order by taken_back.back_order) as back_rank
    from taken_back
),

recovery as (
    select
        taken_back_ranked.alert_id,
        min(taken_back_ranked.back_order) as recovered_order
    from taken_back_ranked
    inner join sweep_rows on sweep_rows.alert_id = taken_back_ranked.alert_id
    where taken_back_ranked.back_rank = floor(sweep_rows.sweeps / 2) + 1
    group by taken_back_ranked.alert_id
),

recovered_label as (
    select distinct
        recovery.alert_id,
        recovery.recovered_order,
        same_sweep.other_to_label as recovered_at
    from recovery
    inner join same_sweep
        on same_sweep.alert_id = recovery.alert_id
        and same_sweep.other_to_order = recovery.recovered_order
),

other_unchanged as (
    select
        same_sweep.alert_id,
        same_sweep.kernel_name,
        same_sweep.kernel_provider,
        same_sweep.kernel_operation_mode,
        same_sweep.metric_name,
        same_sweep.x_name,
        same_sweep.extra_config,
        same_sweep.other_to_order,
        same_sweep.other_to_label
    from same_sweep
    inner join ranged on ranged.alert_id = same_sweep.alert_id
    inner join commit_ranges as range_from on range_from.commit_order = same_sweep.other_from_order
    inner join commit_ranges as range_to on range_to.commit_order = same_sweep.other_to_order
    where ranged.axis = 'commit'
        and same_sweep.other_beyond_noise
        and (same_sweep.other_ratio > 1) = (same_sweep.own_ratio > 1)
        and abs(ln(same_sweep.other_ratio) - ln(same_sweep.own_ratio)) <= same_sweep.own_threshold_log
        and (same_sweep.other_to_order <= ranged.from_order or same_sweep.other_from_order >= ranged.to_order)
        and range_to.kernel_unknown_through = range_from.kernel_unknown_through
),

other_touched as (
    select distinct
        other_unchanged.alert_id,
        other_unchanged.kernel_name,
        other_unchanged.other_to_order
    from other_unchanged
    inner join commit_ranges as range_from on range_from.commit_order > 0
    inner join commit_change on commit_change.to_commit = range_from."commit"
    inner join same_sweep
        on same_sweep.alert_id = other_unchanged.alert_id
        and same_sweep.kernel_name = other_unchanged.kernel_name
        and same_sweep.other_to_order = other_unchanged.other_to_order
    where range_from.commit_order > same_sweep.other_from_order
        and range_from.commit_order <= other_unchanged.other_to_order
        and coalesce(list_contains(commit_change.touches_kernel_of, other_unchanged.kernel_name), false)
),

bimodal as (
    select
        other_unchanged.alert_id,
        count(distinct other_unchanged.kernel_name || '/' || other_unchanged.kernel_provider || '/'
            || other_unchanged.kernel_operation_mode || '/' || other_unchanged.metric_name || '/'
            || coalesce(other_unchanged.x_name, '') || '/' || coalesce(other_unchanged.extra_config, ''))
            as bimodal_sweeps,
        list_sort(list_distinct(list(other_unchanged.other_to_label))) as bimodal_seen_at
    from other_unchanged
    left join other_touched
        on other_touched.alert_id = other_unchanged.alert_id
        and other_touched.kernel_name = other_unchanged.kernel_name
        and other_touched.other_to_order = other_unchanged.other_to_order
    where other_touched.alert_id is null
    group by other_unchanged.alert_id
),

labelled as (
    select
        ranged.*,
        case when ranged.axis = 'commit' then coalesce(range_from.short_commit, ranged.from_point)
            else ranged.from_point end as from_label,
        case when ranged.axis = 'commit' then coalesce(range_to.short_commit, ranged.to_point)
            else ranged.to_point end as to_label,
        case when ranged.axis = 'commit' then range_to.release else ranged.to_point end as to_release_at
    from ranged
    left join commit_ranges as range_from
        on ranged.axis = 'commit' and range_from.commit_order = ranged.from_order
    left join commit_ranges as range_to
        on ranged.axis = 'commit' and range_to.commit_order = ranged.to_order
),

judged as (
    select
        labelled.*,
        sweep_rows.sweeps,
        sweep_rows.step_pairs,
        sweep_rows.kernels,
        sweep_rows.kernel_names,
        sweep_rows.metrics,
        sweep_rows.worst_ratio,
        sweep_rows.median_ratio,
        sweep_rows.references_measured,
        sweep_rows.references_moved,
        kernel_change.kernels_changed,
        kernel_change.changed_kernels,
        kernel_change.kernels_harness,
        kernel_change.harness_kernels,
        kernel_change.environment_kernels,
        coalesce(suspect_list.suspects, cast([] as varchar[])) as suspects,
        suspect_list.suspect_text,
        coalesce(harness_list.harness_suspects, cast([] as varchar[])) as harness_suspects,
        harness_list.harness_text,
        coalesce(launch_counts.launch_bound_pairs, 0) as launch_bound_sweeps,
        coalesce(bimodal.bimodal_sweeps, 0) as bimodal_sweeps,
        coalesce(bimodal.bimodal_seen_at, cast([] as varchar[])) as bimodal_seen_at,
        recovered_label.recovered_at,
        case
            when kernel_change.kernels_unknown > 0 or kernel_change.kernels_judged is null then 'unknown'
            when kernel_change.kernels_changed = kernel_change.kernels_judged then 'code'
            when kernel_change.kernels_harness = kernel_change.kernels_judged then 'harness'
            when kernel_change.kernels_changed + kernel_change.kernels_harness = 0 then 'environment'
            else 'mixed'
        end as cause,
        case
            when labelled.kind = 'transient' then 'transient'
            when recovered_label.recovered_at is not null then 'recovered'
            when member_states.redefined_pairs > 0 and member_states.persisting_pairs = 0 then 'redefined'
            else 'open'
        end as data_status,
        coalesce(member_states.redefined_pairs, 0) as redefined_pairs,
        member_states.redefined_text,
        alert_toolchain.toolchain_change,
        alert_toolchain.toolchain_recorded
    from labelled
    inner join sweep_rows on sweep_rows.alert_id = labelled.alert_id
    left join kernel_change on kernel_change.alert_id = labelled.alert_id
    left join suspect_list on suspect_list.alert_id = labelled.alert_id
    left join harness_list on harness_list.alert_id = labelled.alert_id
    left join launch_counts on launch_counts.alert_id = labelled.alert_id
    left join bimodal on bimodal.alert_id = labelled.alert_id
    left join recovered_label on recovered_label.alert_id = labelled.alert_id
    left join member_states on member_states.alert_id = labelled.alert_id
    left join alert_toolchain on alert_toolchain.alert_id = labelled.alert_id
)

select
    alert_id,
    axis,
    gpu_name,
    direction,
    kind,
    from_point as from_commit,
    to_point as to_commit,
    from_label,
    to_label,
    from_order,
    to_order,
    to_release_at as to_release,
    sweeps,
    pairs,
    kernels,
    kernel_names,
    metrics,
    worst_ratio,
    median_ratio,
    cause,
    suspects,
    kernels_changed,
    changed_kernels,
    harness_suspects,
    harness_kernels,
    launch_bound_sweeps,
    cast(launch_bound_sweeps as double) / step_pairs as launch_bound_share,
    references_measured,
    references_moved,
    bimodal_sweeps,
    bimodal_seen_at,
    data_status,
    recovered_at,
    redefined_pairs,
    redefined_text,
    toolchain_change,
    members_digest,
    -- a toolchain that moved across the range is said first (alert_toolchain: 'torch 2.10.0 → 2.11.0')
    coalesce('toolchain ' || toolchain_change || '; ', '')
    || case
        when cause = 'code'
            then 'code: ' || suspect_text || ' touch' || case when len(suspects) = 1 then 'es' else '' end
            || ' the source of ' || array_to_string(changed_kernels, ', ')
        when cause = 'harness'
            then 'harness: ' || harness_text || ' change' || case when len(harness_suspects) = 1 then 's' else '' end
            || ' how ' || array_to_string(harness_kernels, ', ') || ' ' || case when kernels = 1 then 'is' else 'are' end
            || ' measured; no commit in range touches the source'
        when cause = 'mixed'
            then 'mixed: '
            || concat_ws('; ',
                case when kernels_changed > 0 then 'code for ' || array_to_string(changed_kernels, ', ')
                    || ' (suspects ' || suspect_text || ')' end,
                case when kernels_harness > 0 then 'harness for ' || array_to_string(harness_kernels, ', ')
                    || ' (' || harness_text || ')' end,
                case when len(environment_kernels) > 0
                    then 'environment for ' || array_to_string(environment_kernels, ', ') end
            )
        when cause = 'environment'
            then 'environment: no commit in range touches these kernels or their harness'
        when axis = 'version'
            then 'unknown: a version pair, no commit known'
        else 'unknown: no clone, so the commits in range are not known'
    end
    || case when kernels > 1 then '; ' || cast(kernels as varchar) || ' kernels moved together' else '' end
    || case
        when launch_bound_sweeps > 0
            then '; ' || cast(launch_bound_sweeps as varchar) || ' of ' || cast(step_pairs as varchar)
            || ' launch-bound'
        else ''
    end
    || case
        when references_measured > 0
            then '; reference moved in ' || cast(references_moved as varchar) || ' of '
            || cast(references_measured as varchar)
        else '; no reference measured beside it'
    end
    || case
        when bimodal_sweeps > 0
            then '; bimodal, seen at ' || array_to_string(bimodal_seen_at, ', ')
        else ''
    end
    || case
        when cause in ('code', 'mixed') and kernels_harness = 0 and len(harness_suspects) > 0
            then '; harness changed too: ' || harness_text
        else ''
    end
    || case
        when cause <> 'code' and not coalesce(toolchain_recorded, false)
            then '; toolchain (driver, CUDA, torch, Triton) not recorded'
        else ''
    end
        as cause_evidence
from judged
