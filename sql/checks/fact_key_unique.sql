-- Offending rows: measurement digests that appear more than once.
-- One row per digest is enough for one row per identity key: the digest_integrity check proves
-- each digest recomputes from its row's identity fields, so two rows with one identity would
-- share a digest (a sha256 collision aside). Grouping 10 M rows by ten text columns is not needed.
-- Only digests of the checked facts can be new duplicates: every fact carrying one of them counts.
with facts as (
    select measurement_digest from fact_measurement
    where measurement_digest in (select measurement_digest from checked_facts)
),
by_digest as (
    select measurement_digest, count(*) as n
    from facts
    group by measurement_digest
    having count(*) > 1
)
select 'duplicate digest' as problem, measurement_digest as detail, n from by_digest;
