"""Backfill from upstream git history: a test clone built from the shipped history in data_raw/liger_csv.

One Dagster materialize of the full 40-snapshot history (module fixture); the scenarios (new
commit, rename, deleted rows, empty commit, no data) clone that repo, add commits and rebuild with
the core API against the same content-addressed staging, so nothing already seen is parsed again.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipeline.defs.ingest import staged_sources
from pipeline.defs.resources import WarehouseResource
from pipeline.defs.serve import liger_duckdb
from pipeline.defs.warehouse import warehouse_tables
from pipeline.ingest.discovery import DataRootError, discover_all
from pipeline.ingest.git_history import GitHistoryError, read_history
from pipeline.serve.connect import connect
from pipeline.stage.store import StagingStore
from pipeline.store.merge import Merger
from pipeline.store.warehouse import Warehouse
from tests.fixtures import git_repo as g

SAMPLE = dict(
    kernel_name="fused_add_rms_norm",
    kernel_provider="liger_fused_add_rms_norm",
    kernel_operation_mode="backward",
    gpu_name="NVIDIA H100 80GB HBM3",
    x_value="1024",
    observed_at="2026-04-07 21:27:38",
    metric_name="speed",
)
SAMPLE_UPSTREAM = "b7025a70279b7bea1e635a92f20173abb66498a0"
MAIN = "benchmark/data/all_benchmark_data.csv"
CUTILE = "benchmark/data/all_benchmark_data_cutile.csv"
CUTEDSL = "benchmark/data/all_benchmark_data_cutedsl.csv"
FACT_COLS = (
    "measurement_digest",
    "source_count",
    "first_seen_commit",
    "first_seen_at",
    "last_seen_commit",
    "last_seen_at",
    "in_upstream_head",
    "p50",
)


@dataclass
class Base:
    repo: Path
    mapping: dict[str, str]  # upstream sha -> test commit sha
    data_raw: Path  # empty
    warehouse: Path
    result: dg.ExecuteInProcessResult


def materialize(data_raw: Path, warehouse: Path, git_repo: str = "", **kw) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [staged_sources, warehouse_tables, liger_duckdb],
        resources={"warehouse": WarehouseResource(data_raw=str(data_raw), warehouse=str(warehouse), git_repo=git_repo)},
        instance=dg.DagsterInstance.ephemeral(),
        **kw,
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Base:
    tmp = tmp_path_factory.mktemp("git_backfill")
    mapping = g.build_history_repo(tmp / "repo")
    (tmp / "data_raw").mkdir()
    with pytest.MonkeyPatch.context() as mp:  # the documented way: LIGER_GIT_REPO in the environment
        mp.setenv("LIGER_GIT_REPO", str(tmp / "repo"))
        result = materialize(tmp / "data_raw", tmp / "warehouse")
    assert result.success
    return Base(tmp / "repo", mapping, tmp / "data_raw", tmp / "warehouse", result)


def q(db: Path, sql: str, params=None):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or {}).fetchall()


def build(base: Base, repo: Path | None, data_raw: Path | None = None):
    """A full build into a throwaway warehouse that reuses the base warehouse's staging; returns
    (facts by digest, sources, counts, history)."""
    scratch = Path(tempfile.mkdtemp(dir=base.warehouse.parent))
    try:
        wh = Warehouse(scratch)
        staging = StagingStore(Warehouse(base.warehouse).staging)
        sources, problems, history = discover_all(data_raw or base.data_raw, repo, base.warehouse / "git_blobs")
        counts = staging.stage(sources)
        Merger(wh, staging).run(sources, problems)
        cols = ", ".join(FACT_COLS)
        with connect(warehouse=wh.root_uri, local_dir=str(scratch)) as con:  # provenance included
            facts = {
                r[0]: dict(zip(FACT_COLS, r, strict=True))
                for r in con.execute(f"select {cols} from fact_measurement").fetchall()
            }
            src = con.execute(
                "select source_path, upstream_path, upstream_commit, in_upstream_head, content_sha256 from source"
            ).fetchall()
    finally:
        shutil.rmtree(scratch)
    return facts, src, counts, history


@pytest.fixture(scope="module")
def base_build(base):
    return build(base, base.repo)


def clone(base: Base, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(base.repo), str(dest)], check=True, capture_output=True)
    return dest


def rows_of(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])


# --------------------------------------------------------------------------- full backfill


def test_backfill_gives_4421_facts(base):
    db = base.warehouse / "liger.duckdb"
    assert q(db, "select count(*), count(distinct measurement_digest) from measurements") == [(4421, 4421)]
    assert q(db, "select count(*) from measurements where in_upstream_head") == [(3897,)]
    assert q(db, "select count(*) from quarantine") == [(0,)]
    # 40 snapshots (39 commits: one commit touched two files), each once, each with provenance
    assert q(
        db, "select count(*), count(distinct source_path), count(upstream_commit), count(committed_at) from source"
    ) == [(40, 40, 40, 40)]
    assert q(db, "select count(*) from source where source_path not like 'git:%'") == [(0,)]
    assert q(db, "select count(*) from source where in_upstream_head") == [(3,)]
    assert {r[0] for r in q(db, "select distinct upstream_path from source")} == {MAIN, CUTILE, CUTEDSL}
    meta = base.result.asset_materializations_for_node("staged_sources")[-1].metadata
    assert meta["git_snapshots"].value == 40 and meta["git_commits"].value == 39
    assert meta["git_head"].value == g.git(base.repo, "rev-parse", "HEAD")


def test_blobs_cached_by_sha_inside_the_warehouse(base):
    cache = (base.warehouse / "git_blobs").resolve()
    files = sorted(cache.iterdir())
    assert len(files) == 40 and all(len(f.stem) == 40 and f.suffix == ".csv" for f in files)
    blob = g.git(base.repo, "rev-parse", f"HEAD:{CUTEDSL}")
    assert (cache / f"{blob}.csv").read_bytes() == (base.repo / CUTEDSL).read_bytes()


def test_sample_row_first_seen_in_b7025a7027(base):
    rows = q(
        base.warehouse / "liger.duckdb",
        """select first_seen_commit, first_seen_at, in_upstream_head from measurements
                where kernel_name = $kernel_name and kernel_provider = $kernel_provider
                  and kernel_operation_mode = $kernel_operation_mode and gpu_name = $gpu_name and x_value = $x_value
                  and observed_at = $observed_at::timestamp and metric_name = $metric_name""",
        SAMPLE,
    )
    assert len(rows) == 1
    commit, first_seen_at, in_head = rows[0]
    assert commit == base.mapping[SAMPLE_UPSTREAM]
    assert str(first_seen_at.date()) == "2026-04-08"
    assert in_head is True


def test_provenance_same_as_file_ingestion(base, base_build, tmp_path):
    """data_raw snapshots (SNAPSHOTS.tsv) and git snapshots give the same facts, counts and provenance."""
    data_raw = tmp_path / "data_raw"
    shutil.copytree(g.HISTORY, data_raw / "liger_csv")
    files, files_src, _, _ = build(base, None, data_raw)
    git_facts, git_src, counts, _ = base_build
    assert counts["newly_staged"] == 0  # same contents as the Dagster run: nothing parsed again
    assert len(files_src) == len(git_src) == 40
    assert files.keys() == git_facts.keys()
    for digest, f in files.items():
        gf = git_facts[digest]
        assert (f["source_count"], f["first_seen_at"], f["last_seen_at"], f["in_upstream_head"]) == (
            gf["source_count"],
            gf["first_seen_at"],
            gf["last_seen_at"],
            gf["in_upstream_head"],
        )
        assert base.mapping[f["first_seen_commit"]] == gf["first_seen_commit"]
        assert base.mapping[f["last_seen_commit"]] == gf["last_seen_commit"]


def test_snapshot_in_data_raw_and_git_is_one_source(base, base_build, tmp_path):
    """SNAPSHOTS.tsv naming the same commit+path as git: one source, not two (short shas match too)."""
    data_raw = tmp_path / "data_raw"
    shutil.copytree(g.HISTORY, data_raw / "liger_csv")
    tsv = data_raw / "liger_csv" / "SNAPSHOTS.tsv"
    rows = g.snapshot_rows()
    for i, r in enumerate(rows):
        test_sha = base.mapping[r["upstream_commit"]]
        r["upstream_commit"] = test_sha if i % 2 else test_sha[:10]
    with tsv.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    both, src, _, _ = build(base, base.repo, data_raw)
    git_facts, _, _, _ = base_build
    assert len(src) == 40 and not [s for s in src if s[0].startswith("git:")]
    assert both == git_facts  # same digests, source_count, first/last seen commits, head flags


# --------------------------------------------------------------------------- incremental scenarios


def test_one_more_commit_adds_exactly_its_new_measurements(base, base_build, tmp_path):
    repo = clone(base, tmp_path / "repo")
    header, rows = rows_of(repo / MAIN)
    ts = header.index("timestamp")
    n = 7
    rerun = [list(r) for r in rows[-n:]]
    for r in rerun:  # upstream re-runs a benchmark: the rows are overwritten in place
        r[ts] = "2026-09-01 12:00:00"
    write_rows(repo / MAIN, header, rows[:-n] + rerun)
    new_commit = g.commit(repo, "re-run", "2026-09-01T13:00:00+00:00")
    facts, src, counts, history = build(base, repo)
    old, _, _, _ = base_build
    assert counts["newly_staged"] == 1 and history.blobs_written == 1  # cost of the one new snapshot only
    assert len(src) == 41
    added = facts.keys() - old.keys()
    assert len(added) == n and old.keys() <= facts.keys()
    assert all(facts[d]["first_seen_commit"] == new_commit and facts[d]["in_upstream_head"] for d in added)
    # the overwritten rows vanished from HEAD: kept, flagged
    dropped = [d for d in old if old[d]["in_upstream_head"] and not facts[d]["in_upstream_head"]]
    assert len(dropped) == n


def test_renamed_csv_keeps_facts_and_records_new_path(base, base_build, tmp_path):
    repo = clone(base, tmp_path / "repo")
    new_path = "benchmark/data/cutedsl_benchmark_data.csv"
    g.git(repo, "mv", CUTEDSL, new_path)
    rename_commit = g.commit(repo, "rename", "2026-09-02T00:00:00+00:00")
    facts, src, counts, _ = build(base, repo)
    old, old_src, _, _ = base_build
    assert facts.keys() == old.keys() and counts["newly_staged"] == 0
    renamed = [s for s in src if s[2] == rename_commit]
    assert [(s[0], s[1], s[3]) for s in renamed] == [(f"git:{rename_commit}:{new_path}", new_path, True)]
    assert [s[3] for s in src if s[1] == CUTEDSL] == [False]  # the old path is no longer in HEAD
    moved = [d for d in facts if facts[d]["last_seen_commit"] == rename_commit]
    assert len(moved) == 165
    assert all(facts[d]["in_upstream_head"] and facts[d]["source_count"] == old[d]["source_count"] + 1 for d in moved)
    assert sum(f["in_upstream_head"] for f in facts.values()) == sum(f["in_upstream_head"] for f in old.values())


def test_commit_deleting_rows_keeps_facts_flagged(base, base_build, tmp_path):
    repo = clone(base, tmp_path / "repo")
    header, rows = rows_of(repo / CUTILE)
    write_rows(repo / CUTILE, header, rows[:-10])
    g.commit(repo, "drop rows", "2026-09-03T00:00:00+00:00")
    facts, src, _, _ = build(base, repo)
    old, _, _, _ = base_build
    assert facts.keys() == old.keys()  # nothing lost
    flipped = [d for d in old if old[d]["in_upstream_head"] != facts[d]["in_upstream_head"]]
    assert len(flipped) == 10 and not any(facts[d]["in_upstream_head"] for d in flipped)


def test_empty_commit_changes_nothing(base, tmp_path):
    """Re-ingesting after an empty commit, through Dagster: same digests, counts, sources; nothing parsed."""
    repo = clone(base, tmp_path / "repo")
    g.git(repo, "commit", "-q", "--allow-empty", "-m", "empty", date="2026-09-04T00:00:00+00:00")
    db = base.warehouse / "liger.duckdb"
    fact_sql = (
        "select measurement_digest, source_count, first_seen_commit, last_seen_commit, in_upstream_head "
        "from measurements order by 1"
    )
    src_sql = "select source_path, content_sha256, in_upstream_head from source order by 1"
    before = q(db, fact_sql), q(db, src_sql)
    result = materialize(base.data_raw, base.warehouse, git_repo=str(repo))
    assert result.success
    meta = result.asset_materializations_for_node("staged_sources")[-1].metadata
    assert meta["newly_staged"].value == 0 and meta["git_blobs_extracted"].value == 0
    assert meta["git_snapshots"].value == 40
    after = q(db, fact_sql), q(db, src_sql)
    assert after == before
    assert len(after[1]) == len({r[0] for r in after[1]}) == 40


def test_reingesting_is_idempotent(base, base_build):
    facts, src, counts, history = build(base, base.repo)
    assert counts["newly_staged"] == 0 and history.blobs_written == 0
    assert (facts, src) == (base_build[0], base_build[1])


# --------------------------------------------------------------------------- edge cases


def test_repo_without_benchmark_data(base, tmp_path):
    repo = g.init_repo(tmp_path / "nodata")
    assert read_history(repo, tmp_path / "cache").head is None  # no commits yet: empty, no error
    (repo / "benchmark" / "data").mkdir(parents=True)
    (repo / "benchmark" / "data" / "README.md").write_text("no csv here\n")
    (repo / "benchmark" / "results.csv").write_text("a,b\n1,2\n")  # outside benchmark/data
    head = g.commit(repo, "no data", "2025-01-01T00:00:00+00:00")
    history = read_history(repo, tmp_path / "cache")
    assert history.head == head and history.sources == [] and history.commits == 0
    assert not (tmp_path / "cache").exists()
    # no input anywhere (an empty data_raw, a clone without data): taken for a wrong path, not an
    # empty warehouse; the run fails before it commits anything
    result = materialize(base.data_raw, tmp_path / "wh", git_repo=str(repo), raise_on_error=False)
    assert not result.success
    assert not (tmp_path / "wh" / "tables").exists()


def test_odd_paths_and_merges(tmp_path):
    """Unicode/quote/space paths survive (-z), and a clean merge records no duplicate snapshot."""
    repo = g.init_repo(tmp_path / "r")
    small = g.HISTORY / "2026-08-03_4d899a0bdc_all_benchmark_data_cutedsl.csv"
    odd = 'benchmark/data/we ird "é".csv'
    (repo / "benchmark" / "data").mkdir(parents=True)
    shutil.copy(small, repo / odd)
    c1 = g.commit(repo, "odd", "2025-01-01T00:00:00+00:00")
    g.git(repo, "checkout", "-q", "-b", "side")
    header, rows = rows_of(repo / odd)
    write_rows(repo / "benchmark/data/side.csv", header, rows[:5])
    c2 = g.commit(repo, "side", "2025-01-02T00:00:00+00:00")
    g.git(repo, "checkout", "-q", "main")
    write_rows(repo / odd, header, rows[:-1])
    c3 = g.commit(repo, "main", "2025-01-03T00:00:00+00:00")
    g.git(repo, "merge", "-q", "--no-ff", "-m", "merge", "side", date="2025-01-04T00:00:00+00:00")
    history = read_history(repo, tmp_path / "cache")
    got = sorted((s.upstream_commit, s.upstream_path, s.in_upstream_head) for s in history.sources)
    assert got == sorted([(c1, odd, False), (c2, "benchmark/data/side.csv", True), (c3, odd, True)])
    assert all(s.path.parent == (tmp_path / "cache").resolve() for s in history.sources)


def test_invalid_repo_is_a_clear_error(base, tmp_path):
    with pytest.raises(GitHistoryError, match="not a directory"):
        read_history(tmp_path / "missing", tmp_path / "cache")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GitHistoryError, match="not a git repository"):
        read_history(tmp_path / "plain", tmp_path / "cache")
    result = materialize(base.data_raw, tmp_path / "wh", git_repo=str(tmp_path / "plain"), raise_on_error=False)
    assert not result.success
    failure = [e for e in result.all_events if e.is_step_failure][0]
    assert "LIGER_GIT_REPO" in str(failure.event_specific_data.error)


def test_unset_repo_means_no_backfill(base, monkeypatch):
    monkeypatch.delenv("LIGER_GIT_REPO", raising=False)
    assert WarehouseResource().git_repo_path() is None
    with pytest.raises(DataRootError, match="holds no CSV"):  # an empty data_raw and no clone
        discover_all(base.data_raw, None)
