-- The Delta table as stored.
create or replace view dim_workload as select * from delta_dim_workload;
