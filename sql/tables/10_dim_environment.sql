-- The Delta table as stored.
create or replace view dim_environment as select * from delta_dim_environment;
