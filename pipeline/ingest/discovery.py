"""Find input files under data_raw (with upstream provenance from SNAPSHOTS.tsv) and merge them with
the git backfill's snapshots into one list of sources."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

from pipeline.config import DATA_RAW_ENV
from pipeline.contracts.reasons import Reason
from pipeline.contracts.sources import (
    CSV_KIND,
    KERNELINDEX_KIND,
    KERNELINDEX_SUFFIXES,
    SourceFile,
    git_source_path,
    parse_utc,
)
from pipeline.ingest import commit_runs, gh_pages, git_history


def _committed_at(text: str | None) -> datetime | None:
    """SNAPSHOTS.tsv is hand-maintained: a missing or unreadable date is no date, not an error."""
    try:
        return parse_utc(text) if text and text.strip() else None
    except ValueError:
        return None


def _refused(root: Path, p: Path) -> str | None:
    """Why ``p`` is not read (None: it is read): a symlink loop (self, cycle, through a directory cycle),
    a real path outside data_raw, or something not a regular file (a FIFO, a folder)."""
    try:
        real = p.resolve()
    except (OSError, RuntimeError) as exc:  # a loop: RuntimeError("Symlink loop ...") before Python 3.13
        return f"symlink loop, never followed: {exc}"
    if not real.is_relative_to(root) or not p.is_file():
        return "path resolves outside data_raw or is not a regular file"
    return None


def read_snapshot_index(tsv: Path) -> dict[str, dict[str, str]]:
    """SNAPSHOTS.tsv: file, upstream_path, upstream_commit, committed_at (extra columns ignored).
    The index is hand-maintained provenance: a byte that is not UTF-8 is replaced (the row still
    names its file), never a reason to stop the run."""
    with tsv.open(newline="", encoding="utf-8-sig", errors="replace") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t") if row.get("file")}


def _kind_of(root: Path, p: Path) -> str | None:
    """CSV files anywhere under data_raw are upstream-format CSVs; JSON bundles only under kernelindex/."""
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return CSV_KIND
    if suffix in KERNELINDEX_SUFFIXES and p.relative_to(root).parts[0] == KERNELINDEX_KIND:
        return KERNELINDEX_KIND
    return None


class DataRootError(ValueError):
    """The input root is missing, unreadable or holds no input at all: the run must stop before it
    commits anything, or the warehouse (which mirrors its inputs) would be emptied."""


def _check_root(data_raw: Path) -> Path:
    """The resolved root, or DataRootError naming it."""
    try:
        root = data_raw.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise DataRootError(f"{DATA_RAW_ENV}={data_raw} is a symlink loop ({exc}); nothing was committed") from exc
    if not root.is_dir():
        raise DataRootError(f"{DATA_RAW_ENV}={root} does not exist or is not a folder; nothing was committed")
    try:
        next(root.iterdir(), None)
    except OSError as exc:
        raise DataRootError(f"{DATA_RAW_ENV}={root} cannot be read ({exc.strerror}); nothing was committed") from exc
    return root


def discover(data_raw: Path) -> tuple[list[SourceFile], list[tuple[str, str, str]]]:
    """Return (sources, problems). Files whose real path leaves data_raw are refused, not followed.

    A CSV's provenance comes from the SNAPSHOTS.tsv in its own folder, when there is one. A missing,
    unreadable or input-less root raises DataRootError: removing some inputs is a deliberate change
    the next run mirrors (and logs), removing all of them is taken for a wrong path.
    """
    root = _check_root(data_raw)
    sources: list[SourceFile] = []
    problems: list[tuple[str, str, str]] = []
    snapshot_index: dict[Path, dict[str, dict[str, str]]] = {}
    for p in sorted(root.rglob("*")):
        if p.name.startswith("."):
            continue
        kind = _kind_of(root, p)
        if kind is None:
            continue
        rel = p.relative_to(root).as_posix()
        refused = _refused(root, p)
        if refused is not None:
            problems.append((rel, str(Reason.UNREADABLE_FILE), refused))
            continue
        src = SourceFile(path=p.resolve(), source_path=rel, kind=kind, size_bytes=p.stat().st_size)
        if kind == CSV_KIND and (folder := gh_pages.snapshot_folder(p)):
            src.gh_pages_folder = folder
            src.upstream_path = f"{gh_pages.BENCHMARKS_DIR}/{folder}/{gh_pages.CSV_NAME}"
        # marked: one run of one commit, as gh-pages (a refused environment.json is a problem of its own)
        elif kind == CSV_KIND and not commit_runs.mark(src, root, problems):
            if p.parent not in snapshot_index:
                tsv = p.parent / "SNAPSHOTS.tsv"
                snapshot_index[p.parent] = read_snapshot_index(tsv) if tsv.is_file() else {}
            meta = snapshot_index[p.parent].get(p.name)
            if meta:
                src.upstream_path = meta.get("upstream_path") or None
                src.upstream_commit = meta.get("upstream_commit") or None
                src.committed_at = _committed_at(meta.get("committed_at"))
        sources.append(src)
    _mark_head(sources)
    return sources, problems


def _mark_head(sources: list[SourceFile]) -> None:
    """Without a git repo, the newest snapshot of each upstream path is taken as that path's HEAD."""
    latest: dict[str, SourceFile] = {}
    for s in sources:
        if s.upstream_path and s.committed_at and s.in_upstream_head is None:
            cur = latest.get(s.upstream_path)
            if cur is None or (s.committed_at, s.source_path) > (cur.committed_at, cur.source_path):
                latest[s.upstream_path] = s
    for s in sources:
        if s.upstream_path and s.committed_at and s.in_upstream_head is None:
            s.in_upstream_head = latest.get(s.upstream_path) is s


def _same_commit(a: str, b: str) -> bool:
    """Full shas compare equal; an abbreviated sha (>= 7 hex digits) matches its full form."""
    a, b = a.lower(), b.lower()
    short, full = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 7 and full.startswith(short)


def merge_git_sources(files: list[SourceFile], git_sources: list[SourceFile]) -> list[SourceFile]:
    """data_raw sources + git snapshots, one source per (upstream commit, upstream path).

    A snapshot present both as a data_raw file (SNAPSHOTS.tsv names its commit and path) and in
    git stays ONE source: the data_raw file is kept (so source rows and source_count do not change
    when a repo is configured later) and takes git's exact ``in_upstream_head``.
    """
    by_path: dict[str, list[SourceFile]] = {}
    for g in git_sources:
        by_path.setdefault(g.upstream_path or "", []).append(g)
    dropped: set[int] = set()
    for f in files:
        if f.kind != CSV_KIND or not f.upstream_commit or not f.upstream_path:
            continue
        for g in by_path.get(f.upstream_path, ()):
            if id(g) not in dropped and _same_commit(f.upstream_commit, g.upstream_commit or ""):
                f.in_upstream_head = g.in_upstream_head
                f.upstream_commit = g.upstream_commit
                dropped.add(id(g))
                break
    return files + [g for g in git_sources if id(g) not in dropped]


def discover_all(
    data_raw: Path, git_repo: Path | None = None, blob_cache: Path | None = None, bisect_root: Path | None = None
):
    """``discover(data_raw)`` plus, when ``git_repo`` is given, every git snapshot of benchmark/data/*.csv.

    ``bisect_root`` (the warehouse's bisect/ folder) adds the commit runs `make bisect` wrote there.
    Returns (sources, problems, history) where history is a ``git_history.GitHistory`` (None
    without a repo). Blobs are cached under ``blob_cache`` (required with a repo). Raises
    ``git_history.GitHistoryError`` when ``git_repo`` is not a usable repository.
    """
    sources, problems = discover(data_raw)
    sources += commit_runs.discover_bisect_folder(bisect_root, problems)
    if git_repo is None:
        _require_inputs(data_raw, sources, problems)
        return sources, problems, None
    if blob_cache is None:
        raise ValueError("blob_cache is required with a git repo")
    history = git_history.read_history(git_repo, blob_cache)
    pages = gh_pages_sources(git_repo, blob_cache)
    sources = merge_git_sources(sources, history.sources) + pages
    _require_inputs(data_raw, sources, problems)
    return sources, problems, history


def _require_inputs(data_raw: Path, sources: list, problems: list) -> None:
    if not sources and not problems:
        raise DataRootError(
            f"{DATA_RAW_ENV}={data_raw.resolve()} holds no CSV or kernelindex file (and no clone adds any); "
            "nothing was committed. To empty the warehouse on purpose, delete its folder."
        )


def gh_pages_sources(git_repo: Path, blob_cache: Path) -> list[SourceFile]:
    """Every benchmark.csv in every commit of the clone's gh-pages branch (upstream overwrites a folder
    when it re-runs one), each distinct (folder, blob) once. A snapshot also under data_raw is dropped
    after hashing (`drop_duplicate_snapshots`)."""
    found = gh_pages.discover_git(git_repo, blob_cache=blob_cache)
    return [
        SourceFile(
            path=s.path,
            source_path=git_source_path(s.gh_pages_commit, s.upstream_path),
            kind=CSV_KIND,
            size_bytes=s.size_bytes,
            upstream_path=s.upstream_path,
            upstream_commit=s.gh_pages_commit,
            committed_at=s.gh_pages_committed_at,
            gh_pages_folder=s.folder,
        )
        for s in found.snapshots
        if s.path is not None
    ]


def drop_duplicate_snapshots(sources: list[SourceFile]) -> list[SourceFile]:
    """Once hashed: a gh-pages snapshot found both under data_raw and in the clone stays one source
    (the data_raw file, so adding a clone later changes no source row)."""
    local = {(s.gh_pages_folder, s.content_sha256) for s in sources if s.gh_pages_folder and not s.upstream_commit}
    return [
        s
        for s in sources
        if not (s.gh_pages_folder and s.upstream_commit and (s.gh_pages_folder, s.content_sha256) in local)
    ]
