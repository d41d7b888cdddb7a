-- version_changes: each pair of consecutive versions of each series.
-- materialize: table   (computed once per build; see Warehouse.build_duckdb)
--
-- Consecutive means consecutive among the versions this series was measured
-- at, in PEP 440 order (version_rank), never text order. Lower is better for
-- every metric (ms and MB), so ratio > 1 is "worse".
-- bands_separated: for a worse change to_p20 > from_p80, for a better change
-- to_p80 < from_p20 (upstream's p20/p80 bands do not overlap).
-- Reference providers (torch, huggingface, ...) are included as context;
-- verdicts (`regressions`) judge liger-family providers only.
create or replace view version_changes as
with series_versions as (
    select * from series_versions
),

paired as (
    select
        *,
        lag(liger_version) over series_order as from_version,
        lag(version_rank) over series_order as from_version_rank,
        lag(observed_at) over series_order as from_observed_at,
        lag(p20) over series_order as from_p20,
        lag(p50) over series_order as from_p50,
        lag(p80) over series_order as from_p80,
        lag(runs_at_version) over series_order as from_runs
    from series_versions
    window series_order as (
        partition by
            kernel_name, kernel_provider, kernel_operation_mode, metric_name,
            gpu_name, x_name, x_value, extra_config
        order by version_rank
    )
),

with_ratio as (
    select
        *,
        case when from_p50 > 0 and p50 > 0 then p50 / from_p50 end as ratio
    from paired
    where from_version is not null
)

select
    kernel_name,
    kernel_provider,
    is_liger,
    kernel_operation_mode,
    metric_name,
    metric_unit,
    gpu_name,
    x_name,
    x_label,
    x_value,
    x_numeric,
    extra_config,
    from_version,
    liger_version as to_version,
    from_version_rank,
    version_rank as to_version_rank,
    from_observed_at,
    observed_at as to_observed_at,
    from_p20,
    from_p50,
    from_p80,
    p20 as to_p20,
    p50 as to_p50,
    p80 as to_p80,
    from_runs,
    runs_at_version as to_runs,
    ratio,
    ln(ratio) as log_ratio,
    case
        when ratio > 1 then 'worse'
        when ratio < 1 then 'better'
        when ratio = 1 then 'equal'
    end as direction,
    coalesce(
        case
            when ratio > 1 then p20 > from_p80
            when ratio < 1 then p80 < from_p20
        end,
        false
    ) as bands_separated
from with_ratio
