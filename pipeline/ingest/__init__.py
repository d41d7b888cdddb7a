"""Ingest helpers that do not depend on Dagster (see ``gh_pages`` for upstream's gh-pages snapshots)."""
