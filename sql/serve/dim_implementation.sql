/* MODEL
name: dim_implementation
depends_on: [delta_dim_implementation]
*/
-- The Delta table as stored.
select * from delta_dim_implementation
