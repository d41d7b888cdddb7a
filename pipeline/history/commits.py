"""The commits of a Liger-Kernel clone: which commit each benchmarked run is of, main's first-parent
order, the commits between two benchmarked commits and which of them touch a kernel (docs/commits.md).

Every ``git log`` goes through ``git.log`` and every rev-parse through ``git.rev_parse``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from packaging.version import InvalidVersion, Version

from pipeline.history import git
from pipeline.history.git import open_repo, run
from pipeline.history.paths import (
    HARNESS_ROOT,
    HARNESS_SHARED,
    HARNESS_VIA,
    KERNEL_ROOT,
    changed_definitions,
    is_harness_script,
    touches_kernel,
    used_definitions,
)

MAIN_REFS = ("main", "origin/main", "refs/remotes/origin/main", "master", "HEAD")
ORDER_GIT = "git"
ORDER_COMMITS_TXT = "commits.txt"
ORDER_TIMESTAMP = "timestamp"


def naive_utc(dt: datetime) -> datetime:
    return dt.astimezone(UTC).replace(tzinfo=None) if dt.tzinfo else dt


class BenchmarkedRun(Protocol):
    """What ordering needs of one benchmarked run (a gh-pages snapshot)."""

    snapshot_id: str
    folder: str
    short_sha: str
    folder_release: str | None
    blob: str
    run_started_at: datetime | None
    gpu_names: tuple[str, ...]
    gh_pages_commit: str | None


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
    entries = git.log(
        git_dir,
        fields=("H", "cI", "P", "s"),
        options=("--no-walk=unsorted", "--stdin"),
        stdin="".join(f"{s}\n" for s in shas).encode(),
    )
    return {
        sha: CommitInfo(sha, naive_utc(datetime.fromisoformat(date)), subject, tuple(parents.split()))
        for (sha, date, parents, subject), _ in ((e.fields, e.files) for e in entries)
    }


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
        tip = git.rev_parse(git_dir, ref)
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
    snapshots: Sequence[BenchmarkedRun],
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

    def run_key(s: BenchmarkedRun) -> tuple:
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
    order: list[tuple[BenchmarkedRun, str]] = [(s, source) for s in placed]
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
    # how it changes the measurement: changed scripts, and scripts using a changed shared definition
    # ("<script> <- <module>:<name>", paths.HARNESS_VIA); see harness_changes
    harness_changes: tuple[str, ...] = ()


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
    revs = [*tips, f"^{base}"] if base else tips
    entries = git.log(git_dir, *revs, fields=("H", "P", "cI", "s"), files="names", options=("--no-renames",))
    commits: dict[str, tuple[CommitInfo, tuple[str, ...]]] = {}
    for e in entries:
        sha, parents, date, subject = e.fields
        files = tuple(f.path for f in e.files if f.path.startswith((KERNEL_ROOT, HARNESS_ROOT)))
        commits[sha] = (
            CommitInfo(sha, naive_utc(datetime.fromisoformat(date)), subject, tuple(parents.split())),
            files,
        )
    return commits


def _kernel_files(files: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f for f in files if f.startswith(KERNEL_ROOT))


def _text(data: bytes | None) -> str | None:
    return data.decode("utf-8", errors="replace") if data is not None else None


def harness_changes(git_dir: Path, log: dict[str, tuple[CommitInfo, tuple[str, ...]]]) -> dict[str, tuple[str, ...]]:
    """Per commit of ``log`` (non-merge), how it changes upstream's harness (paths.touches_harness reads it):
    every benchmark script it changes, and for a shared module it changes (paths.HARNESS_SHARED), each
    script of that commit using a definition whose AST differs from the first parent's. One ``cat-file
    --batch`` for the modules of all such commits and the scripts of theirs, one ``ls-tree`` per such commit."""
    out: dict[str, list[str]] = {}
    shared: dict[str, tuple[str, ...]] = {}
    for sha, (info, files) in log.items():
        if len(info.parents) > 1:
            continue  # a merge: the commits it brings carry the files
        out[sha] = [f for f in files if is_harness_script(f)]
        mods = tuple(f for f in files if f in HARNESS_SHARED)
        if mods and info.parents:
            shared[sha] = mods
    scripts: dict[str, list[str]] = {}
    for sha in shared:
        listed = run(git_dir, "ls-tree", "-z", "--name-only", sha, HARNESS_ROOT).stdout.decode(errors="replace")
        scripts[sha] = [p for p in listed.split("\0") if is_harness_script(p)]
    specs = [
        spec
        for sha, mods in shared.items()
        for spec in (
            *(f"{sha}:{m}" for m in mods),
            *(f"{log[sha][0].parents[0]}:{m}" for m in mods),
            *(f"{sha}:{p}" for p in scripts[sha]),
        )
    ]
    blobs = (
        {spec: (obj.read() if obj is not None else None) for spec, obj in git.cat_file_batch(git_dir, specs)}
        if specs
        else {}
    )
    for sha, mods in shared.items():
        parent = log[sha][0].parents[0]
        for mod in mods:
            new = _text(blobs.get(f"{sha}:{mod}"))
            changed = changed_definitions(_text(blobs.get(f"{parent}:{mod}")), new)
            for script in scripts[sha]:
                for name in sorted(changed & used_definitions(_text(blobs.get(f"{sha}:{script}")), new)):
                    out[sha].append(f"{script}{HARNESS_VIA}{mod}:{name}")
    return {sha: tuple(v) for sha, v in out.items()}


def commit_ranges(repo: Path, ordered: list[OrderedSnapshot]) -> list[CommitRange]:
    """For each consecutive pair of snapshots placed by the git graph, the commits of ``git log prev..cur``
    (first-parent commits and everything they merged), each with its files under src/liger_kernel/.
    One ``merge-base --octopus`` and one ``git log --name-only`` over all snapshot commits."""
    git_dir = open_repo(repo)
    rows = [r for r in ordered if r.order_source == ORDER_GIT and git.is_full_sha(r.commit)]
    tips = sorted({r.commit for r in rows})
    if len(tips) < 1:
        return []
    base = None
    if len(tips) > 1:
        proc = run(git_dir, "merge-base", "--octopus", *tips, check=False)
        base = proc.stdout.decode().strip() or None
    log = _log_with_files(git_dir, tips, base)
    harness = harness_changes(git_dir, log)
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
                        _kernel_files(files),
                        (info.sha in on_chain) if graph is not None else None,
                        harness.get(info.sha, ()),
                    )
                    for info, files in commits
                ),
            )
        )
    return ranges


def resolve_rev(repo: Path, rev: str) -> str | None:
    """The full sha of any revision of the clone (a short sha, a branch, a tag, HEAD), or None."""
    return git.rev_parse(open_repo(repo), rev)


def is_ancestor(repo: Path, older: str, newer: str) -> bool:
    return run(open_repo(repo), "merge-base", "--is-ancestor", older, newer, check=False).returncode == 0


def merge_base(repo: Path, a: str, b: str) -> str | None:
    proc = run(open_repo(repo), "merge-base", a, b, check=False)
    return proc.stdout.decode().strip() or None


def commits_between(repo: Path, from_sha: str, to_sha: str) -> CommitRange:
    """``git log from..to`` (first-parent commits and everything they merged, newest first), each with
    its files under src/liger_kernel/: the range between any two commits, as ``commit_ranges`` lists it
    between consecutive snapshots."""
    git_dir = open_repo(repo)
    log = _log_with_files(git_dir, [to_sha], from_sha)
    harness = harness_changes(git_dir, log)
    commits = sorted(log.values(), key=lambda e: (e[0].committed_at, e[0].sha), reverse=True)
    return CommitRange(
        from_sha,
        to_sha,
        from_sha,
        to_sha,
        tuple(
            HistoryCommit(i.sha, i.committed_at, i.subject, _kernel_files(f), harness_changes=harness.get(i.sha, ()))
            for i, f in commits
        ),
    )


def suspects(commit_range: CommitRange, kernel_name: str) -> list[HistoryCommit]:
    """The commits of a range that changed ``kernel_name``'s source (``touches_kernel``)."""
    return [c for c in commit_range.commits if touches_kernel(c.kernel_paths, kernel_name)]


def find_reruns(ranges: list[CommitRange]) -> list[CommitRange]:
    """Consecutive snapshots with no commit touching src/liger_kernel/ between them (including the same commit
    benchmarked twice): for the kernels, the second is a re-run, and any difference is run-to-run noise."""
    return [r for r in ranges if not r.touches_kernel_source]
