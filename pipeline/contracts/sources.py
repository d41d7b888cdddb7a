"""What an input file is: its kind, where it came from upstream, and its content digest."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

CSV_KIND = "liger_csv"
KERNELINDEX_KIND = "kernelindex"
KERNELINDEX_SUFFIXES = (".json", ".ndjson", ".jsonl")
# A source backfilled from the upstream git history is named ``git:<commit>:<path>``; its staging
# partition ``git:<commit>``.
GIT_PREFIX = "git:"


def git_source_path(commit: str, path: str) -> str:
    return f"{GIT_PREFIX}{commit}:{path}"


def git_partition_key(commit: str) -> str:
    return GIT_PREFIX + commit


def is_git(name: str) -> bool:
    """A git source path or a git partition key."""
    return name.startswith(GIT_PREFIX)


def git_commit_of(name: str) -> str:
    """The commit a git source path or partition key names."""
    return name[len(GIT_PREFIX) :].split(":", 1)[0]


@dataclass
class SourceFile:
    path: Path  # absolute, inside data_raw
    source_path: str  # relative to data_raw (or a virtual "git:<commit>:<path>" for backfills)
    kind: str
    content_sha256: str = ""
    size_bytes: int = 0
    upstream_path: str | None = None
    upstream_commit: str | None = None
    committed_at: datetime | None = None  # UTC, naive (see parse_utc)
    in_upstream_head: bool | None = None
    # A gh-pages benchmark snapshot (benchmarks/<folder>/benchmark.csv): its folder names the
    # benchmarked commit; `snapshot` (the run) is "<folder>@<content sha256[:12]>" once hashed.
    gh_pages_folder: str | None = None
    snapshot: str | None = None
    # Our own run at a commit (pipeline/ingest/commit_runs.py): origin 'bisect' and its environment
    # (canonical JSON text); gh_pages_folder then holds the commit's full sha.
    run_origin: str | None = None
    environment: str | None = None

    def name_snapshot(self) -> None:
        if self.gh_pages_folder and self.content_sha256:
            self.snapshot = f"{self.gh_pages_folder}@{self.content_sha256[:12]}"


def file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def parse_utc(text: str) -> datetime:
    """ISO-8601 text -> naive UTC datetime; text without a zone is UTC. Raises ValueError."""
    dt = datetime.fromisoformat(text.strip())
    if dt.tzinfo is None:
        return dt
    return dt.astimezone(UTC).replace(tzinfo=None)
