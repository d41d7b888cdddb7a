/* MODEL
name: dim_protocol
depends_on: [delta_dim_protocol]
*/
-- The Delta table as stored.
select * from delta_dim_protocol
