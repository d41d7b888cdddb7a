"""Backfill from upstream git history: every committed snapshot of ``benchmark/data/*.csv``.

Upstream overwrites a CSV row whenever a benchmark is re-run, so the only full record of past
measurements is the git history of those files. This module turns a local clone into
``SourceFile``s, one per (commit, path) whose blob that commit introduced:

* ``git log --raw -z --no-abbrev -M --diff-merges=combined -- 'benchmark/data/*.csv'`` lists every
  commit touching the CSVs with the new blob sha of each touched path (renames are followed: a
  snapshot is recorded under the path it had at that commit; merges report only paths whose
  result differs from every parent, i.e. genuinely new content). Empty commits are not listed.
* ``git cat-file --batch`` (git.cat_file_batch) streams all blobs not cached yet through ONE process into
  ``<cache>/<blob_sha>.csv`` (written aside, verified against the blob sha, renamed). Files are
  named by blob sha only, so nothing from the repo can choose a path outside the cache.
* ``git ls-tree -r HEAD`` gives the exact ``in_upstream_head``: a snapshot is in HEAD iff HEAD
  has that path with that very blob.

The git CLI is used through ``subprocess`` (no git library). No Dagster imports here.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pipeline.common.files import publish
from pipeline.contracts.sources import CSV_KIND, SourceFile, git_source_path, parse_utc
from pipeline.history import git
from pipeline.history.git import CatObject, GitError, cat_file_batch, open_repo, run

PATHSPEC = "benchmark/data/*.csv"
BLOB_SUFFIX = ".csv"
_HEX = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_FILE_MODES = {"100644", "100755"}  # regular files only: no symlinks, no submodules


class GitHistoryError(GitError):
    """LIGER_GIT_REPO is set but does not name a usable git repository (or git failed)."""


@dataclass
class GitHistory:
    sources: list[SourceFile] = field(default_factory=list)
    head: str | None = None  # full sha of HEAD; None for a repo without commits
    commits: int = 0  # commits that introduced at least one CSV blob
    blobs: int = 0  # distinct blobs referenced
    blobs_written: int = 0  # blobs extracted by this call (the rest were cached)


def _git(git_dir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """``git_dir`` as `validate_repo` returns it."""
    try:
        return run(git_dir, *args, check=check)
    except GitError as exc:
        raise GitHistoryError(str(exc)) from exc


def validate_repo(repo: Path) -> Path:
    """The clone's git dir; raise GitHistoryError with a clear message when git does not accept it."""
    try:
        return open_repo(repo)
    except GitError as exc:
        raise GitHistoryError(str(exc)) from exc


def head_sha(repo: Path) -> str | None:
    """Full sha of HEAD, or None when the repo has no commits yet."""
    return git.rev_parse(repo, "HEAD")


@dataclass(frozen=True)
class _Snapshot:
    commit: str
    committed_at: datetime
    path: str
    blob: str


def list_snapshots(repo: Path, head: str) -> list[_Snapshot]:
    """Every (commit, path, blob) where a commit reachable from HEAD wrote a new CSV blob."""
    try:
        log = git.log(
            repo, head, fields=("H", "cI"), files="raw", options=("-M", "--diff-merges=combined"), paths=(PATHSPEC,)
        )
    except GitError as exc:
        raise GitHistoryError(str(exc)) from exc
    snaps: list[_Snapshot] = []
    for e in log:
        commit, when = e.fields[0], parse_utc(e.fields[1].strip())
        for f in e.files:
            if f.mode not in _FILE_MODES or not _HEX.match(f.blob) or set(f.blob) == {"0"}:
                continue  # deletions, symlinks, submodules
            if _in_pathspec(f.path):
                snaps.append(_Snapshot(commit, when, f.path, f.blob))
    return snaps


def _in_pathspec(path: str) -> bool:
    # git's default pathspec matching: '*' may cross '/', so any .csv under benchmark/data/.
    return path.startswith("benchmark/data/") and path.endswith(".csv")


def head_blobs(repo: Path, head: str) -> dict[str, str]:
    """path -> blob sha of every benchmark CSV in HEAD's tree."""
    out = _git(repo, "ls-tree", "-r", "-z", "--full-tree", head, "--", "benchmark/data").stdout
    blobs: dict[str, str] = {}
    for entry in out.split(b"\0"):
        if not entry:
            continue
        meta, _, path_b = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        path = path_b.decode("utf-8", errors="surrogateescape")
        if kind == "blob" and mode in _FILE_MODES and _in_pathspec(path):
            blobs[path] = sha
    return blobs


def _git_object_hasher(sha: str, size: int):
    h = hashlib.sha1() if len(sha) == 40 else hashlib.sha256()
    h.update(f"blob {size}\0".encode())
    return h


def extract_blobs(repo: Path, blobs: list[str], cache: Path) -> int:
    """Write each blob not yet cached to ``cache/<sha>.csv`` via one ``git cat-file --batch``. Returns count written."""
    todo = sorted({b for b in blobs if not (cache / f"{b}{BLOB_SUFFIX}").is_file()})
    if not todo:
        return 0
    cache.mkdir(parents=True, exist_ok=True)
    written = 0
    try:
        for sha, obj in cat_file_batch(repo, todo):
            if obj is None or obj.type != "blob":
                raise GitHistoryError(
                    f"git cat-file: unexpected answer for blob {sha}: {obj.type if obj else 'missing'}"
                )
            _write_blob(obj, cache)
            written += 1
    except GitHistoryError:
        raise
    except GitError as exc:
        raise GitHistoryError(str(exc)) from exc
    return written


def _write_blob(obj: CatObject, cache: Path) -> None:
    """The blob to ``cache/<sha>.csv`` (atomically), checked against its name as it streams."""
    sha = obj.spec
    hasher = _git_object_hasher(sha, obj.size)
    tmp = cache / f".{sha}.{uuid.uuid4().hex}.tmp"
    try:
        with tmp.open("wb") as fh:
            for chunk in obj.chunks():
                hasher.update(chunk)
                fh.write(chunk)
        if hasher.hexdigest() != sha:
            raise GitHistoryError(f"git cat-file: blob {sha} does not hash to its name")
        publish(tmp, cache / f"{sha}{BLOB_SUFFIX}")
    finally:
        tmp.unlink(missing_ok=True)


def read_history(repo: Path, cache: Path) -> GitHistory:
    """Every committed snapshot of benchmark/data/*.csv reachable from HEAD, as sources backed by cached blobs.

    Raises GitHistoryError when ``repo`` is not a usable git repository. A repository without
    commits or without benchmark data yields an empty history (no error).
    """
    repo = validate_repo(repo)
    head = head_sha(repo)
    if head is None:
        return GitHistory()
    snaps = list_snapshots(repo, head)
    if not snaps:
        return GitHistory(head=head)
    cache = cache.resolve()
    written = extract_blobs(repo, [s.blob for s in snaps], cache)
    in_head = head_blobs(repo, head)
    sources = []
    seen: set[str] = set()
    for s in sorted(snaps, key=lambda s: (s.committed_at, s.commit, s.path)):
        sp = git_source_path(s.commit, s.path)
        if sp in seen:
            continue
        seen.add(sp)
        blob_file = cache / f"{s.blob}{BLOB_SUFFIX}"
        sources.append(
            SourceFile(
                path=blob_file,
                source_path=sp,
                kind=CSV_KIND,
                size_bytes=blob_file.stat().st_size,
                upstream_path=s.path,
                upstream_commit=s.commit,
                committed_at=s.committed_at,
                in_upstream_head=in_head.get(s.path) == s.blob,
            )
        )
    return GitHistory(
        sources=sources,
        head=head,
        commits=len({s.commit for s in snaps}),
        blobs=len({s.blob for s in snaps}),
        blobs_written=written,
    )
