/* MODEL
name: sighting_without_fact
kind: AUDIT
grain: [measurement_digest, source_path, content_sha256, run_seq]
depends_on: [checked_sightings, checked_digest_count]
*/
-- Offending rows: sightings whose measurement digest is in no fact (a fact lost, or a run that
-- published a sighting without its fact, e.g. a late writer whose lock ran out). The sightings a
-- run committed (every one on the periodic full check), against every fact
-- (`checked_digest_count` counts every fact carrying each of their digests).
select s.measurement_digest, s.source_path, s.content_sha256, s.run_seq
from checked_sightings s
    anti join checked_digest_count c using (measurement_digest);
