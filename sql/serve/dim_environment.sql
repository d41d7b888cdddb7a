/* MODEL
name: dim_environment
depends_on: [delta_dim_environment]
*/
-- The Delta table as stored.
select * from delta_dim_environment
