/* MODEL
name: dim_operation
depends_on: [delta_dim_operation]
*/
-- The Delta table as stored.
select * from delta_dim_operation
