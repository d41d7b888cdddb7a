/* MODEL
name: version_kernel_gpus
kind: INCREMENTAL_BY_PARTITION
partitioned_by: [liger_version, kernel_name, gpu_name]
grain: [liger_version, kernel_name, gpu_name]
when_matched: {measurements: sum, first_observed_at: min, last_observed_at: max}
depends_on: [measurements]
*/
-- version_kernel_gpus: the measurements of each Liger version per kernel and GPU (how many, first
-- and last observed). Kept per key, so a new snapshot recounts only the kernels and GPUs it
-- measured at its versions, not every fact of those versions; liger_versions adds them up. Counts,
-- firsts and lasts merge: a new snapshot's facts alone are counted and added to the kept rows.
select
    liger_version,
    version_rank,
    kernel_name,
    gpu_name,
    count(*) as measurements,
    min(observed_at) as first_observed_at,
    max(observed_at) as last_observed_at
from measurements
where liger_version is not null
group by liger_version, version_rank, kernel_name, gpu_name
