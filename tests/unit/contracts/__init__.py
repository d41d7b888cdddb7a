"""Tests of pipeline.contracts."""
