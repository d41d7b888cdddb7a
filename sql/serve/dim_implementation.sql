/* MODEL
name: dim_implementation
kind: VIEW
grain: [implementation_digest]
depends_on: [delta_dim_implementation]
*/
-- The Delta table as stored.
select * from delta_dim_implementation
