-- The Delta table as stored.
create or replace view quarantine as select source_file, location, reason, raw from delta_quarantine;
