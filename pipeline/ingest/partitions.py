"""Staging partitions: one per data_raw file, one per upstream commit of a git backfill.

A partition key names where a source comes from, not its bytes, so a worker given only the key
finds the file (or the commit's blobs) again: ``liger_csv/<file>.csv``, ``kernelindex/<file>``,
``git:<commit sha>``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pipeline.contracts.sources import SourceFile, git_commit_of, git_partition_key, is_git
from pipeline.ingest import git_history
from pipeline.ingest.discovery import discover


def partition_key(src: SourceFile) -> str:
    if is_git(src.source_path):
        return git_partition_key(src.upstream_commit or git_commit_of(src.source_path))
    return src.source_path


def by_partition(sources: list[SourceFile]) -> dict[str, list[SourceFile]]:
    out: dict[str, list[SourceFile]] = defaultdict(list)
    for s in sources:
        out[partition_key(s)].append(s)
    return dict(out)


def current_keys(data_raw: Path, git_repo: Path | None) -> list[str]:
    """Every partition the inputs hold now: a directory walk and, with a clone, one `git log`
    (no blob is read), so a sensor tick stays cheap."""
    sources, _ = discover(data_raw)
    keys = {partition_key(s) for s in sources}
    if git_repo is not None:
        repo = git_history.validate_repo(git_repo)
        head = git_history.head_sha(repo)
        if head:
            keys |= {git_partition_key(snap.commit) for snap in git_history.list_snapshots(repo, head)}
    return sorted(keys)
