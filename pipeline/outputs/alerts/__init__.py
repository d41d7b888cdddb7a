"""Alerts: one per change (GPU, direction, overlapping flagged ranges), attributed to code or
environment (sql/regress/alerts/), with a lifecycle kept in a Delta table that survives every
rebuild (`state`), acknowledgements (`make ack`, `pipeline.cli.ack`) and notifications (`notify`).
docs/regressions.md, section "Alerts"."""
