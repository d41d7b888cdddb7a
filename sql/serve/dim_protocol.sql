/* MODEL
name: dim_protocol
kind: VIEW
grain: [protocol_digest]
depends_on: [delta_dim_protocol]
*/
-- The Delta table as stored.
select * from delta_dim_protocol
