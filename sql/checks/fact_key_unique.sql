/* MODEL
name: fact_key_unique
kind: AUDIT
grain: [detail]
depends_on: [checked_digest_count]
*/
-- Offending rows: measurement digests that appear more than once.
-- One row per digest is enough for one row per identity key: the digest_integrity check proves
-- each digest recomputes from its row's identity fields, so two rows with one identity would
-- share a digest (a sha256 collision aside). Grouping 10 M rows by ten text columns is not needed.
-- Only digests of the checked facts can be new duplicates: every fact carrying one of them counts
-- (`checked_digest_count`, pipeline/serve/checks.register_rules; it also counts the digests of the
-- checked sightings, whose facts are then checked too).
select 'duplicate digest' as problem, measurement_digest as detail, n
from checked_digest_count
where n > 1;
