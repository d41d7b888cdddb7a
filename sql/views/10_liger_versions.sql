-- liger_versions: every measured Liger version in PEP 440 order.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- `liger_version_order` is computed in Python with packaging.version
-- (pipeline.core.versions.version_order_table) because DuckDB cannot parse
-- PEP 440. Text order is wrong (0.5.10 < 0.5.8 as text); the rank is right.
-- Versions that are not valid PEP 440 have rank NULL and are listed here with
-- is_orderable = false; no comparison view uses them.
create or replace view liger_versions as
with source as (
    select
        liger_version,
        gpu_name,
        kernel_name,
        observed_at
    from measurements
    where liger_version is not null
),

version_order as (
    select liger_version, version_rank
    from liger_version_order
),

per_version as (
    select
        liger_version,
        count(*) as measurements,
        count(distinct kernel_name) as kernels,
        count(distinct gpu_name) as gpus,
        list_sort(list(distinct gpu_name)) as gpu_names,
        min(observed_at) as first_observed_at,
        max(observed_at) as last_observed_at
    from source
    group by liger_version
)

select
    per_version.liger_version,
    version_order.version_rank,
    version_order.version_rank is not null as is_orderable,
    coalesce(
        version_order.version_rank = max(version_order.version_rank) over (),
        false
    ) as is_newest,
    per_version.measurements,
    per_version.kernels,
    per_version.gpus,
    per_version.gpu_names,
    per_version.first_observed_at,
    per_version.last_observed_at
from per_version
left join version_order
    on version_order.liger_version = per_version.liger_version
order by version_order.version_rank nulls last, per_version.liger_version
