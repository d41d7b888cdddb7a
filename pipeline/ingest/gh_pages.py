"""Upstream's weekly/release benchmark snapshots (``gh-pages:benchmarks/<short sha>[-v<release>]/benchmark.csv``):
the folders, from a data_raw folder or from every commit of a clone's gh-pages branch.

Pure code: the git CLI through ``pipeline.history.git``, no Dagster; one ``log --raw`` and one
``cat-file --batch`` whatever the number of snapshots. Ordering them by commit and the commits between
them are commit history (``pipeline.history.commits``).

* ``discover_folder(root)`` / ``discover_git(repo)`` -> ``Discovery`` (snapshots, problems, commits.txt).
  A bad folder name is a problem ``(folder, reason)``, never an exception.

See docs/commits.md for the rules.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from packaging.version import InvalidVersion, Version

from pipeline.common.files import write_atomic
from pipeline.history import git
from pipeline.history.commits import naive_utc
from pipeline.history.git import GitError, cat_file_batch, open_repo

BRANCH = "gh-pages"
BENCHMARKS_DIR = "benchmarks"
CSV_NAME = "benchmark.csv"
COMMITS_TXT = "commits.txt"
_SHORT_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_FILE_MODES = {"100644", "100755"}


class GhPagesError(GitError):
    """The repository is not usable, or git failed."""


# ----------------------------------------------------------------------------------------------------------------
# folder names


@dataclass(frozen=True)
class FolderName:
    folder: str
    short_sha: str  # lower-case hex, 7-40 digits, as written in the folder name
    release: str | None  # normalized PEP 440 version of the "-v<release>" suffix


def parse_folder_name(name: str) -> tuple[FolderName | None, str | None]:
    """``<sha>[-v<release>]`` -> (FolderName, None), or (None, reason) for a name that is not a snapshot folder."""
    if not name or name != name.strip():
        return None, "empty name or surrounding whitespace"
    sha, sep, rest = name.partition("-")
    if not _SHORT_SHA.match(sha):
        return None, f"{sha!r} is not a lower-case hex short sha of 7 to 40 digits"
    if not sep:
        return FolderName(name, sha, None), None
    if not rest.startswith("v") or len(rest) < 2:
        return None, f"suffix {'-' + rest!r} is not '-v<release>'"
    try:
        release = str(Version(rest[1:]))
    except InvalidVersion:
        return None, f"release {rest[1:]!r} is not a PEP 440 version"
    return FolderName(name, sha, release), None


def snapshot_folder(csv_path: Path) -> str | None:
    """The folder name when ``csv_path`` is ``…/benchmarks/<sha>[-v<release>]/benchmark.csv``, else None."""
    if csv_path.name != CSV_NAME or csv_path.parent.parent.name != BENCHMARKS_DIR:
        return None
    name, _ = parse_folder_name(csv_path.parent.name)
    return name.folder if name else None


# ----------------------------------------------------------------------------------------------------------------
# snapshots


@dataclass(frozen=True)
class Snapshot:
    """One benchmark.csv as upstream wrote it (one run: one commit, one GPU, one time)."""

    snapshot_id: str  # "<folder>@<blob sha[:12]>": stable across sources and when a folder is overwritten later
    folder: str
    short_sha: str
    folder_release: str | None
    blob: str  # git blob sha of the CSV content (computed for folder files too)
    size_bytes: int
    run_started_at: datetime | None  # min ``timestamp`` in the CSV, naive UTC as written
    gpu_names: tuple[str, ...]
    source: str  # "folder" | "git"
    upstream_path: str  # benchmarks/<folder>/benchmark.csv
    path: Path | None = None  # the file (folder source, or git blob written to blob_cache)
    gh_pages_commit: str | None = None  # gh-pages commit that wrote this blob at this path
    gh_pages_committed_at: datetime | None = None  # naive UTC


@dataclass
class Discovery:
    snapshots: list[Snapshot] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (folder or path, reason)
    commits_txt: list[str] | None = None  # folder names in the order written (None: no commits.txt)


def git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _csv_facts(data: bytes) -> tuple[datetime | None, tuple[str, ...]]:
    """(min run timestamp, distinct gpu names) of an upstream benchmark CSV; columns read by name."""
    text = data.decode("utf-8-sig", errors="replace")
    reader = csv.DictReader(io.StringIO(text))
    earliest: datetime | None = None
    gpus: set[str] = set()
    try:
        for row in reader:
            ts = (row.get("timestamp") or "").strip()
            if ts:
                try:
                    when = naive_utc(datetime.fromisoformat(ts))
                except ValueError:
                    when = None
                if when is not None and (earliest is None or when < earliest):
                    earliest = when
            gpu = (row.get("gpu_name") or "").strip()
            if gpu:
                gpus.add(gpu)
    except csv.Error:  # a malformed CSV is the reader's to quarantine; the rows read before it still count
        return earliest, tuple(sorted(gpus))
    return earliest, tuple(sorted(gpus))


def _make_snapshot(name: FolderName, data: bytes, source: str, **extra) -> Snapshot:
    blob = git_blob_sha(data)
    run_started_at, gpus = _csv_facts(data)
    return Snapshot(
        snapshot_id=f"{name.folder}@{blob[:12]}",
        folder=name.folder,
        short_sha=name.short_sha,
        folder_release=name.release,
        blob=blob,
        size_bytes=len(data),
        run_started_at=run_started_at,
        gpu_names=gpus,
        source=source,
        upstream_path=f"{BENCHMARKS_DIR}/{name.folder}/{CSV_NAME}",
        **extra,
    )


def parse_commits_txt(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def discover_folder(root: Path) -> Discovery:
    """Snapshots in a folder laid out like upstream's ``benchmarks/`` (``root`` is that folder or its parent)."""
    root = Path(root)
    bench = root / BENCHMARKS_DIR if (root / BENCHMARKS_DIR).is_dir() else root
    found = Discovery()
    if not bench.is_dir():
        return found
    txt = bench / COMMITS_TXT
    if txt.is_file():
        found.commits_txt = parse_commits_txt(txt.read_text(encoding="utf-8", errors="replace"))
    for d in sorted(bench.iterdir()):
        if not d.is_dir() or d.name.startswith("."):
            continue
        name, reason = parse_folder_name(d.name)
        csv_path = d / CSV_NAME
        if name is None:
            if csv_path.is_file():
                found.problems.append((d.name, reason or "bad folder name"))
            continue
        if not csv_path.is_file() or csv_path.is_symlink():
            found.problems.append((d.name, f"no regular {CSV_NAME} in the folder"))
            continue
        data = csv_path.read_bytes()
        found.snapshots.append(_make_snapshot(name, data, "folder", path=csv_path.resolve()))
    return found


# ----------------------------------------------------------------------------------------------------------------
# git plumbing


def _cat_file_batch(git_dir: Path, specs: list[str]) -> dict[str, bytes | None]:
    """Every ``spec``'s bytes (object names or ``<rev>:<path>``); None for missing ones."""
    try:
        return {spec: (obj.read() if obj is not None else None) for spec, obj in cat_file_batch(git_dir, specs)}
    except GhPagesError:
        raise
    except GitError as exc:
        raise GhPagesError(str(exc)) from exc


# ----------------------------------------------------------------------------------------------------------------
# discovery in the gh-pages branch


def _snapshot_blobs(git_dir: Path, tip: str) -> tuple[dict[tuple[str, str], tuple[str, datetime]], dict[str, str]]:
    """One ``git log --raw`` over the branch: (folder, blob) -> the oldest gh-pages (commit, date) that
    wrote it, and the folders whose names are not snapshot names."""
    entries: dict[tuple[str, str], tuple[str, datetime]] = {}  # (folder, blob) -> oldest (commit, date)
    bad: dict[str, str] = {}
    log = git.log(
        git_dir,
        tip,
        fields=("H", "cI"),
        files="raw",
        options=("--no-renames", "--diff-merges=first-parent"),
        paths=(f"{BENCHMARKS_DIR}/*/{CSV_NAME}",),
    )
    for e in log:
        commit, when = e.fields[0], naive_utc(datetime.fromisoformat(e.fields[1].strip()))
        for f in e.files:
            if f.mode not in _FILE_MODES or set(f.blob) == {"0"}:
                continue  # deletions, symlinks, submodules
            parts = f.path.split("/")
            if len(parts) != 3 or parts[0] != BENCHMARKS_DIR or parts[2] != CSV_NAME:
                continue  # git's '*' crosses '/': deeper files are not snapshots
            name, reason = parse_folder_name(parts[1])
            if name is None:
                bad[parts[1]] = reason or "bad folder name"
                continue
            key = (parts[1], f.blob)
            prev = entries.get(key)
            if prev is None or when <= prev[1]:  # log runs newest first: the last seen is the oldest writer
                entries[key] = (commit, when)
    return entries, bad


def discover_git(repo: Path, branch: str = BRANCH, blob_cache: Path | None = None) -> Discovery:
    """Every ``benchmarks/*/benchmark.csv`` blob written by ANY commit of ``branch`` (upstream overwrites a folder
    when it re-runs it, so older blobs live only in history). Each (folder, blob) once, with the oldest gh-pages
    commit that wrote it as provenance. commits.txt is read from the branch tip. Blobs are written to
    ``blob_cache/<blob>.csv`` when a cache is given. A repository without the branch yields an empty Discovery."""
    git_dir = open_repo(repo)
    found = Discovery()
    tip = git.rev_parse(git_dir, f"refs/heads/{branch}") or git.rev_parse(git_dir, branch)
    if tip is None:
        return found
    entries, bad = _snapshot_blobs(git_dir, tip)
    found.problems = sorted(bad.items())
    txt_spec = f"{tip}:{BENCHMARKS_DIR}/{COMMITS_TXT}"
    blobs = _cat_file_batch(git_dir, sorted({b for _, b in entries}) + [txt_spec])
    txt = blobs.pop(txt_spec, None)
    if txt is not None:
        found.commits_txt = parse_commits_txt(txt.decode("utf-8", errors="replace"))
    if blob_cache is not None:
        blob_cache.mkdir(parents=True, exist_ok=True)
    for (folder, blob), (gh_commit, gh_when) in sorted(entries.items(), key=lambda kv: (kv[1][1], kv[0])):
        data = blobs.get(blob)
        if data is None:
            found.problems.append((folder, f"blob {blob} is missing from the repository"))
            continue
        path = None
        if blob_cache is not None:
            path = blob_cache / f"{blob}.csv"
            if not path.is_file():
                write_atomic(path, data)
        name, _ = parse_folder_name(folder)
        snap = _make_snapshot(name, data, "git", path=path, gh_pages_commit=gh_commit, gh_pages_committed_at=gh_when)
        if snap.blob != blob:
            raise GhPagesError(f"blob {blob} does not hash to its name")
        found.snapshots.append(snap)
    return found
