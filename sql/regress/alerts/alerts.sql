/* MODEL
name: alerts
kind: VIEW
grain: [alert_id]
depends_on: [alert_groups, alert_state, source_freshness, warehouse_run]
*/
-- alerts: one row per alert (alert_groups), with what people and earlier runs said about it
-- (alert_state: the Delta table <warehouse>/alert_state, which survives every rebuild; read by the
-- build, written by the `alert_notifications` asset and `make ack`).
--   status        acknowledged (by `make ack`, while the alert's flagged pairs are those it had
--                 then: a new flagged step on its sweeps reopens it), else alert_groups.data_status
--                 (open / recovered / transient / redefined)
--   note, acknowledged_at   the acknowledgement, when status is acknowledged
--   opened_run    the warehouse run that first showed the alert
--   changed_run   the warehouse run whose status this is (the newest run when it just changed)
--   line          the alert in one line: range, GPU, sweeps and kernels, worst ratio, cause, status
-- A source that went silent is an alert too (issue 54): kind 'stoppage', axis 'source', one per
-- source_freshness row that is overdue (status 'overdue') or was (status 'resumed' once a new run
-- came): delivered like any alert, once per state change. alert_id 'S-' and 12 hex digits of
-- md5(family, scope); gpu_name the scope (NULL for a family without one).
with current_run as (
    select coalesce(max(seq), 0) as seq from warehouse_run
),

stated as (
    select
        g.*,
        s.opened_run as state_opened_run,
        s.status as state_status,
        s.changed_run as state_changed_run,
        s.notified_status,
        s.notified_at,
        s.delivery_error,
        coalesce(s.ack_members = g.members_digest, false) as is_acknowledged,
        s.ack_note,
        s.acknowledged_at as ack_at
    from alert_groups as g
    left join alert_state as s on s.alert_id = g.alert_id
),

judged as (
    select
        stated.*,
        case when is_acknowledged then 'acknowledged' else data_status end as status
    from stated
)
,

change_alerts as (
select
    judged.alert_id,
    judged.gpu_name,
    judged.direction,
    judged.from_commit,
    judged.to_commit,
    judged.from_label,
    judged.to_label,
    judged.to_release,
    judged.sweeps,
    judged.kernels,
    judged.kernel_names,
    judged.worst_ratio,
    judged.median_ratio,
    judged.cause,
    judged.cause_evidence,
    judged.suspects,
    judged.status,
    judged.recovered_at,
    judged.redefined_text,
    coalesce(judged.state_opened_run, current_run.seq) as opened_run,
    case
        when judged.state_status = judged.status then judged.state_changed_run
        else current_run.seq
    end as changed_run,
    case when judged.is_acknowledged then judged.ack_note end as note,
    case when judged.is_acknowledged then judged.ack_at end as acknowledged_at,
    judged.axis,
    judged.kind,
    judged.pairs,
    judged.metrics,
    judged.kernels_changed,
    judged.changed_kernels,
    judged.harness_suspects,
    judged.harness_kernels,
    judged.launch_bound_sweeps,
    judged.launch_bound_share,
    judged.references_measured,
    judged.references_moved,
    judged.bimodal_sweeps,
    judged.bimodal_seen_at,
    judged.data_status,
    judged.members_digest,
    judged.notified_status,
    judged.notified_at,
    judged.delivery_error,
    judged.from_order,
    judged.to_order,
    judged.from_label || '..' || judged.to_label
    || case
        when judged.to_release is not null and judged.axis = 'commit' then ' (v' || judged.to_release || ')'
        else ''
    end
    || ' on ' || replace(judged.gpu_name, 'NVIDIA ', '') || ': '
    || cast(judged.sweeps as varchar) || ' sweep' || case when judged.sweeps = 1 then '' else 's' end
    || ' of ' || cast(judged.kernels as varchar) || ' kernel' || case when judged.kernels = 1 then '' else 's' end
    || ' '
    || case
        when judged.direction = 'regression' and list_contains(judged.metrics, 'speed') then 'slower'
        when judged.direction = 'regression' then 'hungrier'
        when list_contains(judged.metrics, 'speed') then 'faster'
        else 'leaner'
    end
    || ', worst ×' || printf('%.3g', judged.worst_ratio)
    || ' — ' || judged.cause_evidence
    || ' — '
    || case
        when judged.status = 'recovered' then 'recovered at ' || judged.recovered_at
        when judged.status = 'transient' then 'transient, taken back at ' || coalesce(judged.recovered_at, '?')
        when judged.status = 'redefined' then 'series redefined at ' || judged.redefined_text
        when judged.status = 'acknowledged' then 'acknowledged: ' || coalesce(judged.ack_note, '')
        else 'open'
    end as line
from judged
cross join current_run
),

stoppages as (
    select
        f.*,
        'S-' || substr(md5(f.family || '|' || f.scope), 1, 12) as alert_id
    from source_freshness as f
),

stoppage_alerts as (
    select
        stoppages.alert_id,
        nullif(stoppages.scope, '') as gpu_name,
        'stoppage' as cause,
        case when stoppages.overdue then 'overdue' else 'resumed' end as status,
        coalesce(s.opened_run, current_run.seq) as opened_run,
        case
            when s.status = case when stoppages.overdue then 'overdue' else 'resumed' end then s.changed_run
            else current_run.seq
        end as changed_run,
        'source' as axis,
        'stoppage' as kind,
        'stoppage' as members_digest,
        0 as sweeps,
        0 as pairs,
        0 as kernels,
        cast([] as varchar[]) as kernel_names,
        cast([] as varchar[]) as metrics,
        s.notified_status,
        s.notified_at,
        s.delivery_error,
        stoppages.family || case when stoppages.scope <> '' then ' on ' || stoppages.scope else '' end
        || ': no run since ' || strftime(stoppages.newest_run_at, '%Y-%m-%d')
        || ', usually every ' || printf('%.1f', stoppages.usual_interval_hours / 24) || ' days ('
        || cast(stoppages.runs as varchar) || ' runs)' as cause_evidence,
        stoppages.family || case when stoppages.scope <> '' then ' on ' || replace(stoppages.scope, 'NVIDIA ', '') else '' end
        || ': no run since ' || strftime(stoppages.newest_run_at, '%Y-%m-%d')
        || ', usually every ' || printf('%.1f', stoppages.usual_interval_hours / 24) || ' days — '
        || case
            when stoppages.overdue then 'overdue since ' || strftime(stoppages.overdue_at, '%Y-%m-%d')
            else 'resumed'
        end as line
    from stoppages
    cross join current_run
    left join alert_state as s on s.alert_id = stoppages.alert_id
    where stoppages.overdue or s.alert_id is not null
)

select * from change_alerts
union all by name
select * from stoppage_alerts
