/* MODEL
name: liger_versions
kind: FULL
grain: [liger_version]
depends_on: [liger_version_order, version_kernel_gpus]
*/
-- liger_versions: every measured Liger version in PEP 440 order.
--
-- version_rank comes from `measurements` (liger_version_order, computed in
-- Python because DuckDB cannot parse PEP 440). Text order is wrong (0.5.10 <
-- 0.5.8 as text); the rank is right. Versions that are not valid PEP 440 have
-- rank NULL and are listed here with is_orderable = false; no comparison view
-- uses them. is_newest compares with liger_version_order (the versions the facts name). Summed from
-- version_kernel_gpus (kept per version, kernel and GPU), so a run recounts only what it touched.
with per_version as (
    select
        liger_version,
        version_rank,
        cast(sum(measurements) as bigint) as measurements,
        count(distinct kernel_name) as kernels,
        count(distinct gpu_name) as gpus,
        list_sort(list(distinct gpu_name)) as gpu_names,
        min(first_observed_at) as first_observed_at,
        max(last_observed_at) as last_observed_at
    from version_kernel_gpus
    group by liger_version, version_rank
)

select
    liger_version,
    version_rank,
    version_rank is not null as is_orderable,
    coalesce(version_rank = (select max(version_rank) from liger_version_order), false) as is_newest,
    measurements,
    kernels,
    gpus,
    gpu_names,
    first_observed_at,
    last_observed_at
from per_version
order by version_rank nulls last, liger_version
