/* MODEL
name: version_coverage
kind: VIEW
grain: [kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name, extra_config, liger_version]
depends_on: [sweep_regressions, sweep_versions]
*/
-- version_coverage: for every liger-family sweep and version, was it compared, and if not, why.
--
-- One row per sweep (kernel_name, kernel_provider, kernel_operation_mode,
-- metric_name, gpu_name, x_name, extra_config) and version it was measured at.
--   compared_with  the previous version of the sweep when the pair got a
--                  verdict (anything but `insufficient`), else NULL;
--   verdict        that pair's sweep verdict (sweep_regressions), else NULL;
--   reason         the verdict's reason (prefixed "compared across the rename liger ->
--                  liger_triton: " when a reviewed provider rename, provider_renames, joined
--                  the two versions), or -- whenever compared_with is NULL --
--                  why nothing was compared, the first match of:
--     'no shared x points'          the previous version measured other x;
--     'too few shared x points'     fewer than min_shared_points in common;
--     'earlier version measured only with another config'
--                                   same kernel/provider/pass/metric/GPU,
--                                   earlier, but another extra_config or x_name;
--     'earlier version measured only on another GPU';
--     'earlier version measured only under another provider name'
--                                   e.g. liger_triton before, liger now;
--     'earlier version measured only in another pass or metric';
--     'first version of the series' the kernel was never measured before.
--   from_runs, to_runs  runs of the compared version and of this version.
-- "No regression in the newest version" means little when most of its rows
-- say `first version of the series`: count them here.
-- The first ranks are found over one row per kernel, provider, pass, metric and GPU, then joined: four
-- windows over every sweep and version were most of this model's cost in a deep warehouse. A view: over
-- the stored sweep_steps a read costs a tenth of a second, while stored it was written whole on every run.
with first_ranks as (
    select
        kernel_name,
        kernel_provider,
        kernel_operation_mode,
        metric_name,
        gpu_name,
        min(version_rank) as first_rank_same_gpu,
        min(min(version_rank)) over (
            partition by kernel_name, kernel_provider, kernel_operation_mode, metric_name
        ) as first_rank_any_gpu,
        min(min(version_rank)) over (
            partition by kernel_name, kernel_operation_mode, metric_name
        ) as first_rank_any_provider,
        min(min(version_rank)) over (partition by kernel_name) as first_rank_of_kernel
    from sweep_versions
    group by kernel_name, kernel_provider, kernel_operation_mode, metric_name, gpu_name
),

earliest as (
    select
        sweep_versions.*,
        first_ranks.first_rank_same_gpu,
        first_ranks.first_rank_any_gpu,
        first_ranks.first_rank_any_provider,
        first_ranks.first_rank_of_kernel
    from sweep_versions
    inner join first_ranks
        on first_ranks.kernel_name is not distinct from sweep_versions.kernel_name
        and first_ranks.kernel_provider is not distinct from sweep_versions.kernel_provider
        and first_ranks.kernel_operation_mode is not distinct from sweep_versions.kernel_operation_mode
        and first_ranks.metric_name is not distinct from sweep_versions.metric_name
        and first_ranks.gpu_name is not distinct from sweep_versions.gpu_name
)

select
    earliest.kernel_name,
    earliest.kernel_provider,
    earliest.kernel_operation_mode,
    earliest.metric_name,
    earliest.gpu_name,
    earliest.x_name,
    earliest.extra_config,
    earliest.liger_version,
    earliest.version_rank,
    coalesce(earliest.alias_provider, earliest.kernel_provider) as measured_provider,
    case
        when sweep_regressions.verdict <> 'insufficient' then earliest.from_version
    end as compared_with,
    case
        when sweep_regressions.verdict <> 'insufficient' then sweep_regressions.verdict
    end as verdict,
    case
        when sweep_regressions.verdict <> 'insufficient'
            and earliest.alias_provider is distinct from earliest.from_alias_provider
            then 'compared across the rename ' || earliest.kernel_provider || ' -> '
            || coalesce(earliest.alias_provider, earliest.from_alias_provider) || ': '
            || sweep_regressions.reason
        when sweep_regressions.verdict <> 'insufficient' then sweep_regressions.reason
        when earliest.from_version is not null and coalesce(sweep_regressions.shared_points, 0) = 0
            then 'no shared x points'
        when earliest.from_version is not null then 'too few shared x points'
        when earliest.first_rank_same_gpu < earliest.version_rank
            then 'earlier version measured only with another config'
        when earliest.first_rank_any_gpu < earliest.version_rank
            then 'earlier version measured only on another GPU'
        when earliest.first_rank_any_provider < earliest.version_rank
            then 'earlier version measured only under another provider name'
        when earliest.first_rank_of_kernel < earliest.version_rank
            then 'earlier version measured only in another pass or metric'
        else 'first version of the series'
    end as reason,
    cast(
        case when sweep_regressions.verdict <> 'insufficient' then earliest.from_runs end
        as integer
    ) as from_runs,
    cast(earliest.runs as integer) as to_runs
from earliest
left join sweep_regressions
    on sweep_regressions.kernel_name = earliest.kernel_name
    and sweep_regressions.kernel_provider = earliest.kernel_provider
    and sweep_regressions.kernel_operation_mode = earliest.kernel_operation_mode
    and sweep_regressions.metric_name = earliest.metric_name
    and sweep_regressions.gpu_name = earliest.gpu_name
    and sweep_regressions.x_name is not distinct from earliest.x_name
    and sweep_regressions.extra_config is not distinct from earliest.extra_config
    and sweep_regressions.to_version_rank = earliest.version_rank
