"""The regression rule: its settings, version order, change points, alert state and the judge."""
