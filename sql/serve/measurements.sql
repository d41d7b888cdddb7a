/* MODEL
name: measurements
kind: VIEW
grain: [measurement_digest]
depends_on: [benchmark_commit, benchmark_snapshot, fact_measurement, liger_version_order]
*/
-- benchmarked_commit / release / commit_order: the commit a gh-pages run benchmarked (NULL and
-- commit_status 'unknown' for rows of upstream's main-branch CSVs and other runs without one).
-- commit_order is the commit's (benchmark_commit), not the snapshot's: the runs of a commit
-- benchmarked twice (0a62700-v0.6.4 and 0a62700) are one step, never a pair of steps.
-- measurements: one row per distinct measurement, with the columns people query.
--
-- x_numeric     x_value as a number (NULL when the x value is not numeric), so
--               x points sort as numbers (128 < 1024), not as text.
-- version_rank  PEP 440 order of liger_version from `liger_version_order`
--               (computed in Python with packaging.version before the views);
--               NULL for a version that is not valid PEP 440.
select
    fact_measurement.*,
    try_cast(fact_measurement.x_value as double) as x_numeric,
    liger_version_order.version_rank,
    benchmark_snapshot.commit as benchmarked_commit,
    coalesce(benchmark_snapshot.commit_status, 'unknown') as commit_status,
    benchmark_snapshot.release,
    benchmark_commit.commit_order
from fact_measurement
left join liger_version_order
    on liger_version_order.liger_version = fact_measurement.liger_version
left join benchmark_snapshot
    on benchmark_snapshot.snapshot = fact_measurement.snapshot
left join benchmark_commit
    on benchmark_commit.commit = benchmark_snapshot.commit
