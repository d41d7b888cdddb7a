"""Unit tests: pure modules, no warehouse."""
