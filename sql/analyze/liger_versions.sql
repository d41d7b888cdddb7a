/* MODEL
name: liger_versions
materialized: table
depends_on: [measurements]
*/
-- liger_versions: every measured Liger version in PEP 440 order.
--
-- version_rank comes from `measurements` (liger_version_order, computed in
-- Python because DuckDB cannot parse PEP 440). Text order is wrong (0.5.10 <
-- 0.5.8 as text); the rank is right. Versions that are not valid PEP 440 have
-- rank NULL and are listed here with is_orderable = false; no comparison view
-- uses them.
with per_version as (
    select
        liger_version,
        version_rank,
        count(*) as measurements,
        count(distinct kernel_name) as kernels,
        count(distinct gpu_name) as gpus,
        list_sort(list(distinct gpu_name)) as gpu_names,
        min(observed_at) as first_observed_at,
        max(observed_at) as last_observed_at
    from measurements
    where liger_version is not null
    group by liger_version, version_rank
)

select
    liger_version,
    version_rank,
    version_rank is not null as is_orderable,
    coalesce(version_rank = max(version_rank) over (), false) as is_newest,
    measurements,
    kernels,
    gpus,
    gpu_names,
    first_observed_at,
    last_observed_at
from per_version
order by version_rank nulls last, liger_version
