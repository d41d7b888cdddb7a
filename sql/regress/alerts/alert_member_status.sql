/* MODEL
name: alert_member_status
kind: VIEW
grain: [alert_id, kernel_name, kernel_provider, kernel_operation_mode, metric_name, x_name, extra_config, to_order]
depends_on: [alert_members, series_lineage, verdicts]
*/
-- alert_member_status: every flagged pair of an alert (alert_members) with its own status (issue 54):
--   transient    a pair of a one-step excursion (kind 'transient': the step into it and the pair
--                taking it back)
--   taken back   a step whose sweep moves back beyond noise at a later pair (the first pair from
--                the step's `to` on, beyond noise the other way); taken_back_at names its `to`
--   redefined    a step not taken back whose sweep's chain of comparable pairs (sharing an x point)
--                ends at a benchmarked commit after which its kernel's series keys change on that
--                GPU (series_lineage: keys vanish): the sweep can never be taken back. redefined_at: the commit where the keys
--                changed; redefined_by: the commits in range changing the kernel's harness
--                ('c2f4c02, benchmark_dyt.py'), NULL when none does
--   persisting   otherwise
-- alert_groups derives the alert's status from these (docs/regressions.md).
with steps as (
    select * from alert_members where role = 'step' and kind = 'step'
),

taken_back as (
    select
        steps.alert_id,
        steps.kernel_name,
        steps.kernel_provider,
        steps.kernel_operation_mode,
        steps.metric_name,
        steps.x_name,
        steps.extra_config,
        steps.to_order,
        min(later.to_step_rank) as back_order,
        arg_min(later.to_label, later.to_step_rank) as back_label
    from steps
    inner join verdicts as later
        on later.level = 'sweep'
        and later.axis = steps.axis
        and later.kernel_name = steps.kernel_name
        and later.kernel_provider = steps.kernel_provider
        and later.kernel_operation_mode = steps.kernel_operation_mode
        and later.metric_name = steps.metric_name
        and later.gpu_name = steps.gpu_name
        and later.x_name is not distinct from steps.x_name
        and later.extra_config is not distinct from steps.extra_config
        and later.from_step_rank >= steps.to_order
        and later.raw_beyond_noise
        and (later.ratio > 1) <> (steps.ratio > 1)
    group by
        steps.alert_id, steps.kernel_name, steps.kernel_provider, steps.kernel_operation_mode,
        steps.metric_name, steps.x_name, steps.extra_config, steps.to_order
),

-- the last step a sweep's chain of comparable pairs reaches: a later pair sharing no x point (its
-- sizes were redefined) or no later measurement ends it
last_connected as (
    select
        axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config,
        max(to_step_rank) as last_order
    from verdicts
    where level = 'sweep' and axis = 'commit' and points > 0
    group by axis, kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, x_name, extra_config
),

redefined as (
    select
        steps.alert_id,
        steps.kernel_name,
        steps.kernel_provider,
        steps.kernel_operation_mode,
        steps.metric_name,
        steps.x_name,
        steps.extra_config,
        steps.to_order,
        series_lineage.to_label as redefined_at,
        series_lineage.harness_text as redefined_by
    from steps
    inner join last_connected
        on last_connected.axis = steps.axis
        and last_connected.kernel_name = steps.kernel_name
        and last_connected.kernel_provider = steps.kernel_provider
        and last_connected.kernel_operation_mode = steps.kernel_operation_mode
        and last_connected.metric_name = steps.metric_name
        and last_connected.gpu_name = steps.gpu_name
        and last_connected.x_name is not distinct from steps.x_name
        and last_connected.extra_config is not distinct from steps.extra_config
    inner join series_lineage
        on series_lineage.kernel_name = steps.kernel_name
        and series_lineage.gpu_name = steps.gpu_name
        and series_lineage.from_order = last_connected.last_order
        and series_lineage.vanished > 0
    where steps.axis = 'commit' and last_connected.last_order >= steps.to_order
)

select
    m.alert_id,
    m.axis,
    m.gpu_name,
    m.kernel_name,
    m.kernel_provider,
    m.kernel_operation_mode,
    m.metric_name,
    m.x_name,
    m.extra_config,
    m.role,
    m.kind,
    m.from_label,
    m.to_label,
    m.from_order,
    m.to_order,
    m.ratio,
    case
        when m.kind = 'transient' then 'transient'
        when taken_back.back_order is not null then 'taken back'
        when redefined.redefined_at is not null then 'redefined'
        else 'persisting'
    end as member_status,
    taken_back.back_label as taken_back_at,
    case when taken_back.back_order is null then redefined.redefined_at end as redefined_at,
    case when taken_back.back_order is null then redefined.redefined_by end as redefined_by
from alert_members as m
left join taken_back
    on taken_back.alert_id = m.alert_id
    and taken_back.kernel_name = m.kernel_name
    and taken_back.kernel_provider = m.kernel_provider
    and taken_back.kernel_operation_mode = m.kernel_operation_mode
    and taken_back.metric_name = m.metric_name
    and taken_back.x_name is not distinct from m.x_name
    and taken_back.extra_config is not distinct from m.extra_config
    and taken_back.to_order = m.to_order
left join redefined
    on redefined.alert_id = m.alert_id
    and redefined.kernel_name = m.kernel_name
    and redefined.kernel_provider = m.kernel_provider
    and redefined.kernel_operation_mode = m.kernel_operation_mode
    and redefined.metric_name = m.metric_name
    and redefined.x_name is not distinct from m.x_name
    and redefined.extra_config is not distinct from m.extra_config
    and redefined.to_order = m.to_order
