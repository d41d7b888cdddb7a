/* MODEL
name: measurements
depends_on: [fact_measurement, liger_version_order]
*/
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
    liger_version_order.version_rank
from fact_measurement
left join liger_version_order
    on liger_version_order.liger_version = fact_measurement.liger_version
