-- The Delta table as stored.
create or replace view dim_protocol as select * from delta_dim_protocol;
