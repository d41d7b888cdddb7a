"""What an input file is: its kind, where it came from upstream, and its content digest."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

CSV_KIND = "liger_csv"
KERNELINDEX_KIND = "kernelindex"
KERNELINDEX_SUFFIXES = (".json", ".ndjson", ".jsonl")


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
