"""The Dagster instance class config/dagster.yaml names: not a definition, so not in defs/."""
