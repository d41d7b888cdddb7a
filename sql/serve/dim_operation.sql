/* MODEL
name: dim_operation
kind: VIEW
grain: [operation_digest]
depends_on: [delta_dim_operation]
*/
-- The Delta table as stored.
select * from delta_dim_operation
