"""Commit history: the one git plumbing and `git log` parser, first-parent order, ranges, suspects,
and which paths touch a kernel."""
