/* MODEL
name: dim_workload
depends_on: [delta_dim_workload]
*/
-- The Delta table as stored.
select * from delta_dim_workload
