/* MODEL
name: alert_toolchain
kind: VIEW
grain: [alert_id]
depends_on: [alert_members, benchmark_snapshot]
*/
-- alert_toolchain: what the toolchain did across a commit alert's range (issue 54), from the
-- environment.json our own runs record (benchmark_snapshot.environment; upstream's runs record none,
-- so nothing is guessed for them). A side's tool version is the one its commit's runs on the alert's
-- GPU recorded (a run whose environment names another GPU does not count); a side with two versions of
-- a tool, or none, says nothing about it.
--   toolchain_change    the tools whose version differs between the two sides, torch first:
--                       'torch 2.10.0 → 2.11.0, Triton 3.5.0 → 3.6.0'; NULL when none differs
--   toolchain_recorded  both sides recorded a toolchain
with ranges as (
    select
        alert_id,
        any_value(gpu_name) as gpu_name,
        arg_min(anchor_from, anchor_from_order) as from_point,
        arg_max(anchor_to, anchor_to_order) as to_point
    from alert_members
    where axis = 'commit'
    group by alert_id
),

tools(tool, json_key, rank) as (
    values ('torch', 'torch', 1), ('Triton', 'triton', 2), ('CUDA', 'cuda', 3), ('driver', 'driver', 4)
),

recorded as (
    select
        s.commit,
        json_extract_string(s.environment, '$.gpu') as env_gpu,
        t.tool,
        t.rank,
        json_extract_string(s.environment, '$.' || t.json_key) as version
    from benchmark_snapshot as s
    cross join tools as t
    where s.environment is not null
),

sides as (
    select
        r.alert_id,
        x.side,
        c.tool,
        c.rank,
        case when count(distinct c.version) = 1 then min(c.version) end as version
    from ranges as r
    cross join (values ('from'), ('to')) as x(side)
    inner join recorded as c
        on starts_with(c.commit, case x.side when 'from' then r.from_point else r.to_point end)
        and (c.env_gpu is null or c.env_gpu = r.gpu_name)
    -- a nested value (JSON text) is not a version; portable (Spark has no json_type)
    where c.version <> 'not recorded' and trim(c.version) <> '' and left(c.version, 1) not in ('{', '[')
    group by r.alert_id, x.side, c.tool, c.rank
)

select
    f.alert_id,
    string_agg(f.tool || ' ' || f.version || ' → ' || t.version, ', ' order by f.rank)
        filter (where f.version <> t.version) as toolchain_change,
    true as toolchain_recorded
from sides as f
inner join sides as t on f.alert_id = t.alert_id and f.tool = t.tool and t.side = 'to'
where f.side = 'from'
group by f.alert_id
