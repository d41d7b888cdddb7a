"""Upstream's weekly/release benchmark snapshots (``gh-pages:benchmarks/<short sha>[-v<release>]/benchmark.csv``),
ordered by the commit they measured, and the commits between consecutive snapshots.

Pure code: the git CLI through ``subprocess``, no Dagster. Every git question is asked in a bounded number of
calls, whatever the number of snapshots or commits (one ``log --raw``, one ``cat-file --batch``, one
``cat-file --batch-check``, one ``for-each-ref``, one ``rev-list --parents``, one ``log --no-walk --stdin``,
one ``merge-base --octopus`` and one ``log --name-only``).

* ``discover_folder(root)`` / ``discover_git(repo)`` -> ``Discovery`` (snapshots, problems, commits.txt).
  A bad folder name is a problem ``(folder, reason)``, never an exception.
* ``order_snapshots(snapshots, repo, commits_txt)`` -> ``list[OrderedSnapshot]``: commit, release, order.
* ``commit_ranges(repo, ordered)`` -> ``list[CommitRange]``: the commits of ``git log prev..cur`` for each
  consecutive pair, with the files each touches under ``src/liger_kernel/``.
* ``suspects(range, kernel)``, ``find_reruns(ranges)``.

See docs/commits.md for the rules.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from packaging.version import InvalidVersion, Version

from pipeline.common.files import write_atomic
from pipeline.contracts.rules import KERNEL_ROOT, touches_kernel
from pipeline.ingest.git import GitError, cat_file_batch, open_repo, run

BRANCH = "gh-pages"
BENCHMARKS_DIR = "benchmarks"
CSV_NAME = "benchmark.csv"
COMMITS_TXT = "commits.txt"
MAIN_REFS = ("main", "origin/main", "refs/remotes/origin/main", "master", "HEAD")

ORDER_GIT = "git"
ORDER_COMMITS_TXT = "commits.txt"
ORDER_TIMESTAMP = "timestamp"

_SHORT_SHA = re.compile(r"^[0-9a-f]{7,40}$")
_FULL_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
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
                    when = _naive_utc(datetime.fromisoformat(ts))
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


def _naive_utc(dt: datetime) -> datetime:
    return dt if dt.tzinfo is None else dt.astimezone(UTC).replace(tzinfo=None)


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


def _ref_exists(git_dir: Path, ref: str) -> str | None:
    proc = run(git_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and _FULL_SHA.match(out) else None


# ----------------------------------------------------------------------------------------------------------------
# discovery in the gh-pages branch


def _snapshot_blobs(git_dir: Path, tip: str) -> tuple[dict[tuple[str, str], tuple[str, datetime]], dict[str, str]]:
    """One ``git log --raw`` over the branch: (folder, blob) -> the oldest gh-pages (commit, date) that
    wrote it, and the folders whose names are not snapshot names."""
    out = run(
        git_dir,
        "log",
        "-z",
        "--raw",
        "--no-abbrev",
        "--no-renames",
        "--diff-merges=first-parent",
        "--no-color",
        "--format=%x01%H %cI",
        tip,
        "--",
        f"{BENCHMARKS_DIR}/*/{CSV_NAME}",
    ).stdout
    entries: dict[tuple[str, str], tuple[str, datetime]] = {}  # (folder, blob) -> oldest (commit, date)
    bad: dict[str, str] = {}
    tokens = out.split(b"\0")
    i, commit, when = 0, None, None
    while i < len(tokens):
        tok = tokens[i].decode("utf-8", errors="surrogateescape").lstrip("\n")
        i += 1
        if tok.startswith("\x01"):
            commit, _, date = tok[1:].partition(" ")
            when = _naive_utc(datetime.fromisoformat(date.strip()))
            continue
        if not tok.startswith(":") or i >= len(tokens):
            continue
        fields = tok[1:].split()
        path = tokens[i].decode("utf-8", errors="surrogateescape")
        i += 1
        if len(fields) < 5 or commit is None:
            continue
        dst_mode, dst_blob = fields[1], fields[3]
        if dst_mode not in _FILE_MODES or set(dst_blob) == {"0"}:
            continue  # deletions, symlinks, submodules
        parts = path.split("/")
        if len(parts) != 3 or parts[0] != BENCHMARKS_DIR or parts[2] != CSV_NAME:
            continue  # git's '*' crosses '/': deeper files are not snapshots
        name, reason = parse_folder_name(parts[1])
        if name is None:
            bad[parts[1]] = reason or "bad folder name"
            continue
        key = (parts[1], dst_blob)
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
    tip = _ref_exists(git_dir, f"refs/heads/{branch}") or _ref_exists(git_dir, branch)
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


# ----------------------------------------------------------------------------------------------------------------
# the clone: commits, tags, main's graph


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    committed_at: datetime  # naive UTC
    subject: str
    parents: tuple[str, ...]


def resolve_shas(git_dir: Path, shorts: Iterable[str]) -> dict[str, str]:
    """short sha -> full commit sha, for those the clone resolves unambiguously (one ``cat-file --batch-check``)."""
    shorts = sorted(set(shorts))
    if not shorts:
        return {}
    stdin = "".join(f"{s}^{{commit}}\n" for s in shorts).encode()
    out = run(git_dir, "cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=stdin).stdout.decode()
    resolved: dict[str, str] = {}
    for short, line in zip(shorts, out.splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "commit" and parts[0].startswith(short):
            resolved[short] = parts[0]
    return resolved


def commit_infos(git_dir: Path, shas: Iterable[str]) -> dict[str, CommitInfo]:
    """Date, subject and parents of each commit (one ``git log --no-walk --stdin``)."""
    shas = sorted(set(shas))
    if not shas:
        return {}
    out = run(
        git_dir,
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "-z",
        "--no-color",
        "--format=%H%x00%cI%x00%P%x00%s",
        stdin="".join(f"{s}\n" for s in shas).encode(),
    ).stdout
    fields = out.decode("utf-8", errors="replace").split("\0")
    infos: dict[str, CommitInfo] = {}
    for k in range(0, len(fields) - 3, 4):
        sha = fields[k].strip()
        infos[sha] = CommitInfo(
            sha, _naive_utc(datetime.fromisoformat(fields[k + 1])), fields[k + 3], tuple(fields[k + 2].split())
        )
    return infos


def release_tags(git_dir: Path) -> dict[str, str]:
    """commit sha -> release (PEP 440, normalized) of the tags pointing at it (one ``for-each-ref``). Tags
    ``v<version>`` or ``<version>``; several on one commit -> the highest version."""
    out = run(
        git_dir, "for-each-ref", "--format=%(objectname) %(*objectname) %(refname:strip=2)", "refs/tags"
    ).stdout.decode(errors="replace")
    best: dict[str, Version] = {}
    for line in out.splitlines():
        parts = line.split(" ")
        if len(parts) != 3:
            continue
        obj, peeled, tag = parts
        commit = peeled or obj
        try:
            version = Version(tag[1:] if tag[:1] in "vV" else tag)
        except InvalidVersion:
            continue
        if commit not in best or version > best[commit]:
            best[commit] = version
    return {c: str(v) for c, v in best.items()}


@dataclass
class MainGraph:
    """main's first-parent chain (oldest first) and, for every commit reachable from main, the first-parent
    commit that brought it in (itself for first-parent commits)."""

    ref: str
    tip: str
    chain: list[str]
    position: dict[str, int]  # first-parent commit -> index (0 = oldest)
    merged_by: dict[str, str]  # any commit reachable from main -> first-parent commit that merged it
    dates: dict[str, datetime]  # committer dates of the first-parent commits


def main_graph(git_dir: Path, main_ref: str | None = None) -> MainGraph | None:
    """One ``git rev-list --parents`` over main; None when the clone has no main branch."""
    refs = (main_ref,) if main_ref else MAIN_REFS
    for ref in refs:
        tip = _ref_exists(git_dir, ref)
        if tip:
            break
    else:
        return None
    out = run(git_dir, "rev-list", "--parents", "--format=%ct", tip).stdout.decode().splitlines()
    parents: dict[str, list[str]] = {}
    ctime: dict[str, datetime] = {}
    for k in range(0, len(out) - 1, 2):  # "commit <sha> <parents...>" then "<committer unix time>"
        head = out[k].split()
        parents[head[1]] = head[2:]
        ctime[head[1]] = datetime.fromtimestamp(int(out[k + 1]), UTC).replace(tzinfo=None)
    chain: list[str] = []
    c: str | None = tip
    while c is not None and c in parents:
        chain.append(c)
        c = parents[c][0] if parents[c] else None
    chain.reverse()
    position = {sha: i for i, sha in enumerate(chain)}
    merged_by: dict[str, str] = dict.fromkeys(chain, "")
    for sha in chain:  # oldest first: everything reachable from older chain commits is marked already
        merged_by[sha] = sha
        stack = list(parents[sha][1:])
        while stack:
            x = stack.pop()
            if x in merged_by or x not in parents:
                continue
            merged_by[x] = sha
            stack.extend(parents[x])
    return MainGraph(
        ref=ref, tip=tip, chain=chain, position=position, merged_by=merged_by, dates={s: ctime[s] for s in chain}
    )


def graph_key(graph: MainGraph, sha: str, committed_at: datetime | None) -> tuple[int, int, datetime] | None:
    """Where a commit sits in main's history, as a sortable key (first-parent index, rank, date):

    * on the first-parent chain: (its index, 1, date);
    * reachable from main but not on the chain (a merged branch commit): (index of the first-parent commit
      that merged it, 0, its committer date) -> just before that merge, by date among its siblings;
    * not reachable from main: (index of the newest first-parent commit committed at or before it, 2, date)
      -> by committer date; None without a date.
    """
    if sha in graph.position:
        return graph.position[sha], 1, graph.dates[sha]
    if sha in graph.merged_by:
        return graph.position[graph.merged_by[sha]], 0, committed_at or datetime.min
    if committed_at is None:
        return None
    idx = -1
    for i, c in enumerate(graph.chain):  # dates on the chain are nearly sorted; a linear scan is exact
        if graph.dates[c] <= committed_at:
            idx = i
    return idx, 2, committed_at


# ----------------------------------------------------------------------------------------------------------------
# ordering


@dataclass(frozen=True)
class OrderedSnapshot:
    snapshot_id: str
    folder: str
    commit: str  # full sha when the clone resolves the short sha, else the short sha
    short_commit: str
    release: str | None
    release_source: str | None  # "folder" | "tag" | None
    order_index: int  # 0 = oldest commit
    commits_between: int | None  # first-parent commits from the previous snapshot's commit; None: unknown/first
    order_source: str  # "git" | "commits.txt" | "timestamp"
    committed_at: datetime | None  # commit's committer date, naive UTC (clone only)
    subject: str | None
    run_started_at: datetime | None
    gpu_names: tuple[str, ...]
    blob: str
    gh_pages_commit: str | None
    on_first_parent: bool | None  # None without a clone


def _ordered_rows(order, gkeys: dict, full: dict, infos: dict, tags: dict, graph) -> list[OrderedSnapshot]:
    """The snapshots in their final order, each with its commit, release and commits since the previous."""
    rows: list[OrderedSnapshot] = []
    prev_key: tuple | None = None
    for idx, (s, src) in enumerate(order):
        sha = full.get(s.short_sha)
        info = infos.get(sha) if sha else None
        release, rsource = s.folder_release, "folder" if s.folder_release else None
        if release is None and sha in tags:
            release, rsource = tags[sha], "tag"
        key = gkeys.get(s.snapshot_id) if src == ORDER_GIT else None
        between = None
        if key is not None and prev_key is not None:
            between = key[0] - prev_key[0]
        if src == ORDER_GIT:
            prev_key = key
        rows.append(
            OrderedSnapshot(
                snapshot_id=s.snapshot_id,
                folder=s.folder,
                commit=sha or s.short_sha,
                short_commit=s.short_sha[:7],
                release=release,
                release_source=rsource,
                order_index=idx,
                commits_between=between,
                order_source=src,
                committed_at=info.committed_at if info else None,
                subject=info.subject if info else None,
                run_started_at=s.run_started_at,
                gpu_names=s.gpu_names,
                blob=s.blob,
                gh_pages_commit=s.gh_pages_commit,
                on_first_parent=(sha in graph.position) if graph is not None and sha else None,
            )
        )
    return rows


def order_snapshots(
    snapshots: list[Snapshot],
    repo: Path | None = None,
    commits_txt: list[str] | None = None,
    main_ref: str | None = None,
) -> list[OrderedSnapshot]:
    """Resolve each snapshot's commit and release, and order the snapshots by commit (see docs/commits.md).

    The primary order is the best evidence available: the commit graph of a clone (``git``), else commits.txt,
    else run timestamps. Snapshots the primary evidence cannot place (commit not in the clone, folder not in
    commits.txt) are inserted right after the primary-ordered snapshot that ran last before them
    (``order_source='timestamp'``). Ties (one commit benchmarked twice) go by run time, then commits.txt.
    """
    git_dir = open_repo(repo) if repo is not None else None
    full: dict[str, str] = {}
    infos: dict[str, CommitInfo] = {}
    tags: dict[str, str] = {}
    graph: MainGraph | None = None
    if git_dir is not None:
        full = resolve_shas(git_dir, (s.short_sha for s in snapshots))
        infos = commit_infos(git_dir, full.values())
        tags = release_tags(git_dir)
        graph = main_graph(git_dir, main_ref)
    txt_pos = {name: i for i, name in reversed(list(enumerate(commits_txt or [])))}

    def run_key(s: Snapshot) -> tuple:
        return (s.run_started_at or datetime.max, txt_pos.get(s.folder, len(txt_pos)), s.snapshot_id)

    gkeys: dict[str, tuple] = {}
    if graph is not None:
        for s in snapshots:
            sha = full.get(s.short_sha)
            info = infos.get(sha) if sha else None
            key = graph_key(graph, sha, info.committed_at if info else None) if sha else None
            if key is not None:
                gkeys[s.snapshot_id] = key
    if gkeys:
        source, placed = (
            ORDER_GIT,
            sorted((s for s in snapshots if s.snapshot_id in gkeys), key=lambda s: (gkeys[s.snapshot_id], run_key(s))),
        )
    elif txt_pos and any(s.folder in txt_pos for s in snapshots):
        source, placed = (
            ORDER_COMMITS_TXT,
            sorted((s for s in snapshots if s.folder in txt_pos), key=lambda s: (txt_pos[s.folder], run_key(s))),
        )
    else:
        source, placed = ORDER_TIMESTAMP, sorted(snapshots, key=run_key)
    primary = {s.snapshot_id for s in placed}
    order: list[tuple[Snapshot, str]] = [(s, source) for s in placed]
    for s in sorted((s for s in snapshots if s.snapshot_id not in primary), key=run_key):
        at = 0
        for i, (p, _) in enumerate(order):  # after the last snapshot that ran at or before it
            if run_key(p) <= run_key(s):
                at = i + 1
        order.insert(at, (s, ORDER_TIMESTAMP))

    return _ordered_rows(order, gkeys, full, infos, tags, graph)


# ----------------------------------------------------------------------------------------------------------------
# the commits between snapshots, and which kernels they touch


@dataclass(frozen=True)
class HistoryCommit:
    sha: str
    committed_at: datetime  # naive UTC
    subject: str
    kernel_paths: tuple[str, ...]  # files it touches under src/liger_kernel/ (merges: none, their commits carry them)
    first_parent: bool | None = None


@dataclass(frozen=True)
class CommitRange:
    """``git log from..to`` for two consecutive snapshots (newest first)."""

    from_snapshot: str
    to_snapshot: str
    from_commit: str
    to_commit: str
    commits: tuple[HistoryCommit, ...]

    @property
    def touches_kernel_source(self) -> bool:
        return any(c.kernel_paths for c in self.commits)


def _log_with_files(git_dir: Path, tips: list[str], base: str | None) -> dict[str, tuple[CommitInfo, tuple[str, ...]]]:
    args = ["log", "-z", "--name-only", "--no-renames", "--no-color", "--format=%x01%H%x00%P%x00%cI%x00%s", *tips]
    if base:
        args.append(f"^{base}")
    out = run(git_dir, *args, "--").stdout.decode("utf-8", errors="surrogateescape")
    commits: dict[str, tuple[CommitInfo, tuple[str, ...]]] = {}
    for record in out.split("\x01")[1:]:
        fields = record.split("\0")
        if len(fields) < 4:
            continue
        sha, parents, date, subject = fields[:4]
        files = tuple(p for p in (f.lstrip("\n") for f in fields[4:]) if p.startswith(KERNEL_ROOT))
        commits[sha] = (
            CommitInfo(sha, _naive_utc(datetime.fromisoformat(date)), subject, tuple(parents.split())),
            files,
        )
    return commits


def commit_ranges(repo: Path, ordered: list[OrderedSnapshot]) -> list[CommitRange]:
    """For each consecutive pair of snapshots placed by the git graph, the commits of ``git log prev..cur``
    (first-parent commits and everything they merged), each with its files under src/liger_kernel/.
    One ``merge-base --octopus`` and one ``git log --name-only`` over all snapshot commits."""
    git_dir = open_repo(repo)
    rows = [r for r in ordered if r.order_source == ORDER_GIT and _FULL_SHA.match(r.commit)]
    tips = sorted({r.commit for r in rows})
    if len(tips) < 1:
        return []
    base = None
    if len(tips) > 1:
        proc = run(git_dir, "merge-base", "--octopus", *tips, check=False)
        base = proc.stdout.decode().strip() or None
    log = _log_with_files(git_dir, tips, base)
    graph = main_graph(git_dir)
    on_chain = graph.position if graph is not None else {}

    def ancestors(sha: str) -> set[str]:  # within the logged range only: anc(x) \ anc(base)
        seen: set[str] = set()
        stack = [sha]
        while stack:
            x = stack.pop()
            if x in seen or x not in log:
                continue
            seen.add(x)
            stack.extend(log[x][0].parents)
        return seen

    cache: dict[str, set[str]] = {}
    ranges: list[CommitRange] = []
    for prev, cur in zip(rows, rows[1:], strict=False):
        for sha in (prev.commit, cur.commit):
            if sha not in cache:
                cache[sha] = ancestors(sha)
        members = cache[cur.commit] - cache[prev.commit]
        commits = sorted((log[s] for s in members), key=lambda e: (e[0].committed_at, e[0].sha), reverse=True)
        ranges.append(
            CommitRange(
                prev.snapshot_id,
                cur.snapshot_id,
                prev.commit,
                cur.commit,
                tuple(
                    HistoryCommit(
                        info.sha,
                        info.committed_at,
                        info.subject,
                        files,
                        (info.sha in on_chain) if graph is not None else None,
                    )
                    for info, files in commits
                ),
            )
        )
    return ranges


def resolve_rev(repo: Path, rev: str) -> str | None:
    """The full sha of any revision of the clone (a short sha, a branch, a tag, HEAD), or None."""
    return _ref_exists(open_repo(repo), rev)


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return run(open_repo(repo), "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def merge_base(repo: Path, a: str, b: str) -> str | None:
    proc = run(open_repo(repo), "merge-base", a, b, check=False)
    return proc.stdout.decode().strip() or None


def commits_between(repo: Path, from_sha: str, to_sha: str) -> CommitRange:
    """``git log from..to`` (first-parent commits and everything they merged, newest first), each with
    its files under src/liger_kernel/: the range between any two commits, as ``commit_ranges`` lists it
    between consecutive snapshots."""
    log = _log_with_files(open_repo(repo), [to_sha], from_sha)
    commits = sorted(log.values(), key=lambda e: (e[0].committed_at, e[0].sha), reverse=True)
    return CommitRange(
        from_sha,
        to_sha,
        from_sha,
        to_sha,
        tuple(HistoryCommit(i.sha, i.committed_at, i.subject, f) for i, f in commits),
    )


def suspects(commit_range: CommitRange, kernel_name: str) -> list[HistoryCommit]:
    """The commits of a range that changed ``kernel_name``'s source (``touches_kernel``)."""
    return [c for c in commit_range.commits if touches_kernel(c.kernel_paths, kernel_name)]


def find_reruns(ranges: list[CommitRange]) -> list[CommitRange]:
    """Consecutive snapshots with no commit touching src/liger_kernel/ between them (including the same commit
    benchmarked twice): for the kernels, the second is a re-run, and any difference is run-to-run noise."""
    return [r for r in ranges if not r.touches_kernel_source]
