-- The Delta table as stored.
create or replace view dim_implementation as select * from delta_dim_implementation;
