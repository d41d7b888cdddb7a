/* MODEL
name: dim_workload
kind: VIEW
grain: [workload_digest]
depends_on: [delta_dim_workload]
*/
-- The Delta table as stored.
select * from delta_dim_workload
