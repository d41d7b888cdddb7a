/* MODEL
name: quarantine
kind: VIEW
grain: [source_file, location]
depends_on: [delta_quarantine]
*/
-- The Delta table as stored.
select source_file, location, reason, raw from delta_quarantine
