/* MODEL
name: quarantine
depends_on: [delta_quarantine]
*/
-- The Delta table as stored.
select source_file, location, reason, raw from delta_quarantine
