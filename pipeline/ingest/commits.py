"""Which commit each gh-pages snapshot benchmarked, in what order, and what changed between them.

Two tables, recomputed whole from every snapshot source (a few dozen; one git call each kind):
  benchmark_snapshot  one row per snapshot (the run): commit, release, commit order, commits between
  commit_change       every commit between consecutive benchmarked commits, with its files under
                      src/liger_kernel/ (suspects; `touches_kernel` decides per kernel when read)
The order comes from the clone's commit graph when there is one, else commits.txt, else run time
(`history.order_snapshots`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa

from pipeline.common import duck
from pipeline.contracts.sources import SourceFile
from pipeline.contracts.tables import BENCHMARK_SNAPSHOT, COMMIT_CHANGE
from pipeline.history import commits as history
from pipeline.ingest import gh_pages


@dataclass(frozen=True)
class SnapshotStats:
    """What the staged rows say about one snapshot: when it started and on which GPUs."""

    run_started_at: datetime | None
    gpu_names: tuple[str, ...]


def snapshot_stats(staged: dict[str, Path]) -> dict[str, SnapshotStats]:
    """Run start and GPUs of each snapshot, from its staged rows (one DuckDB scan of two columns)."""
    if not staged:
        return {}
    names = pa.table({"snapshot": list(staged), "filename": [str(p) for p in staged.values()]})
    with duck.connect() as con:
        con.register("names", names)
        rows = con.sql(
            """select n.snapshot, min(observed_at), list(distinct gpu_name order by gpu_name)
            from read_parquet($files, filename = true) r join names n using (filename)
            where r.reason is null group by n.snapshot""",
            params={"files": names["filename"].to_pylist()},
        ).fetchall()
    return {snap: SnapshotStats(started, tuple(g for g in gpus if g)) for snap, started, gpus in rows}


def _commits_txt(sources: list[SourceFile]) -> list[str] | None:
    for s in sources:
        txt = s.path.parent.parent / gh_pages.COMMITS_TXT
        if s.path and not s.upstream_commit and txt.is_file():
            return gh_pages.parse_commits_txt(txt.read_text(encoding="utf-8", errors="replace"))
    return None


def _snapshots(sources: list[SourceFile], stats: dict[str, SnapshotStats]) -> list[gh_pages.Snapshot]:
    out = {}
    for s in sources:
        name, _ = gh_pages.parse_folder_name(s.gh_pages_folder or "")
        if name is None or s.snapshot is None or s.snapshot in out:
            continue
        st = stats.get(s.snapshot, SnapshotStats(None, ()))
        out[s.snapshot] = gh_pages.Snapshot(
            snapshot_id=s.snapshot,
            folder=name.folder,
            short_sha=name.short_sha,
            folder_release=name.release,
            blob="",
            size_bytes=s.size_bytes,
            run_started_at=st.run_started_at,
            gpu_names=st.gpu_names,
            source="git" if s.upstream_commit else "folder",
            upstream_path=s.upstream_path or "",
            gh_pages_commit=s.upstream_commit,
        )
    return list(out.values())


def commit_tables(
    sources: list[SourceFile], stats: dict[str, SnapshotStats], repo: Path | None
) -> tuple[pa.Table, pa.Table]:
    """(benchmark_snapshot, commit_change) for the snapshot sources among ``sources``."""
    snaps = _snapshots([s for s in sources if s.gh_pages_folder], stats)
    ordered = history.order_snapshots(snaps, repo, _commits_txt([s for s in sources if s.gh_pages_folder]))
    ranges = history.commit_ranges(repo, ordered) if repo is not None and ordered else []
    kernel_changed = {r.to_snapshot: r.touches_kernel_source for r in ranges}
    harness_changed = {r.to_snapshot: any(c.harness_changes for c in r.commits) for r in ranges}
    # our own runs at commits (commit_runs.py) say so; upstream's gh-pages runs are 'gh_pages'
    # two byte-identical runs of one commit are one snapshot: the one that carries an environment speaks for
    # it (then the first by path), so a copy without environment.json does not drop the other's
    own: dict[str, SourceFile] = {}
    for s in sorted((s for s in sources if s.snapshot and s.run_origin), key=lambda s: s.source_path):
        if s.snapshot not in own or (own[s.snapshot].environment is None and s.environment is not None):
            own[s.snapshot] = s
    snapshot_rows = [
        {
            "snapshot": o.snapshot_id,
            "folder": o.folder,
            "commit": o.commit,
            "short_commit": o.short_commit,
            "commit_status": "resolved" if len(o.commit) >= 40 else "short",
            "release": o.release,
            "release_source": o.release_source,
            "commit_order": o.order_index,
            "commits_between": o.commits_between,
            "order_source": o.order_source,
            "committed_at": o.committed_at,
            "subject": o.subject,
            "on_first_parent": o.on_first_parent,
            "kernel_changed": kernel_changed.get(o.snapshot_id),
            "harness_changed": harness_changed.get(o.snapshot_id),
            "run_started_at": o.run_started_at,
            "gh_pages_commit": o.gh_pages_commit,
            "origin": own[o.snapshot_id].run_origin if o.snapshot_id in own else "gh_pages",
            "environment": own[o.snapshot_id].environment if o.snapshot_id in own else None,
        }
        for o in ordered
    ]
    change_rows = [
        {
            "from_commit": r.from_commit,
            "to_commit": r.to_commit,
            "commit": c.sha,
            "committed_at": c.committed_at,
            "subject": c.subject,
            "first_parent": c.first_parent,
            "kernel_paths": list(c.kernel_paths),
            "harness_changes": list(c.harness_changes),
        }
        for r in {(r.from_commit, r.to_commit): r for r in ranges}.values()
        for c in r.commits
    ]
    return (
        pa.Table.from_pylist(snapshot_rows, schema=BENCHMARK_SNAPSHOT.schema),
        pa.Table.from_pylist(change_rows, schema=COMMIT_CHANGE.schema),
    )


def reference_tables(
    sources: list[SourceFile], staged_path: Callable[[SourceFile], Path], repo: Path | None
) -> dict[str, pa.Table]:
    """What a run merges beside the facts: benchmark_snapshot and commit_change, from the gh-pages
    snapshots among ``sources`` (each named by its folder and content) and their staged files."""
    for s in sources:
        s.name_snapshot()
    stats = snapshot_stats({s.snapshot: staged_path(s) for s in sources if s.snapshot})
    snapshot, change = commit_tables(sources, stats, repo)
    return {"benchmark_snapshot": snapshot, "commit_change": change}
