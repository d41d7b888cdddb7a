/* MODEL
name: dim_environment
kind: VIEW
grain: [environment_digest]
depends_on: [delta_dim_environment]
*/
-- The Delta table as stored.
select * from delta_dim_environment
