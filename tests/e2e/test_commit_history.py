"""Commit history end to end: a small synthetic clone whose gh-pages branch benchmarks commits out of
commit order, overwrites a folder and benchmarks one commit twice (tests/fixtures/gh_pages_repo.py),
ingested by a real Dagster run; the order, releases and the commits between come out of the
warehouse."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from pipeline.defs.resources import WarehouseResource
from tests.conftest import all_assets_and_checks
from tests.fixtures.gh_pages_repo import build_gh_pages_repo


def _build(data_raw, warehouse, git_repo="") -> duckdb.DuckDBPyConnection:
    result = dg.materialize(
        all_assets_and_checks(),
        resources={
            "warehouse": WarehouseResource(data_raw=str(data_raw), warehouse=str(warehouse), git_repo=str(git_repo))
        },
        instance=dg.DagsterInstance.ephemeral(),
        selection=dg.AssetSelection.assets("staged_sources").downstream(),
    )
    assert result.success
    return duckdb.connect(str(warehouse / "liger.duckdb"), read_only=True)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return build_gh_pages_repo(tmp_path_factory.mktemp("clone") / "repo")


def test_the_commit_graph_orders_snapshots_and_names_commits(clone, tmp_path):
    raw = tmp_path / "data_raw"
    raw.mkdir()
    con = _build(raw, tmp_path / "wh", clone.path)
    order = con.execute(
        "select short_commit, release, order_source, run_started_at from benchmark_snapshot order by commit_order"
    ).fetchall()
    shorts = [o[0] for o in order]
    c = clone.short
    # c6 ran after c7 (2025-01-11 vs 2025-01-10) but comes before it in commit order; f1 (merged by
    # m5) sorts before the merge, so before c6; the commit the clone lacks goes by its run time.
    assert shorts.index(c("c1")) < shorts.index(c("c2")) < shorts.index(c("f1")) < shorts.index(c("c6"))
    assert shorts.index(c("c6")) < shorts.index(c("c7"))
    assert {o[2] for o in order if o[0] != "deadbee"} == {"git"}
    # one commit benchmarked twice: two runs of one commit, the release from the folder and the tag
    c6 = con.execute("select runs, release from benchmark_commit where commit = ?", [clone.commits["c6"]]).fetchone()
    assert c6 == (2, "0.2.0")
    # the folder of c2 was overwritten by a later gh-pages commit: both runs are kept
    assert con.execute("select runs from benchmark_commit where short_commit = ?", [c("c2")]).fetchone() == (2,)
    facts = con.execute(
        "select benchmarked_commit, commit_status, count(*) from measurements group by all order by all"
    ).fetchall()
    assert (clone.commits["c6"], "resolved", 4) in facts  # 2 runs x 2 rows
    assert ("deadbee", "short", 2) in facts


def test_commits_between_and_which_kernel_they_touch(clone, tmp_path):
    raw = tmp_path / "data_raw"
    raw.mkdir()
    con = _build(raw, tmp_path / "wh", clone.path)
    rows = con.execute(
        "select commit, subject, touches_kernel_of from commit_change where to_commit = ? order by committed_at",
        [clone.commits["c7"]],
    ).fetchall()
    assert [r[0] for r in rows] == [clone.commits["c7"]]
    assert rows[0][2] == ["swiglu"]  # transformers/swiglu.py is swiglu's source, not rms_norm's
    readme_only = con.execute(
        "select kernel_changed from benchmark_snapshot where short_commit = ? order by run_started_at",
        [clone.short("c2")],
    ).fetchall()
    assert readme_only[0] == (False,)  # c1..c2 changes only the README: a re-run for the kernels


def test_without_a_clone_commits_txt_orders_a_folder_laid_out_like_upstreams(clone, tmp_path):
    raw = tmp_path / "data_raw"
    clone.export_pages(raw / "liger_gh_pages")
    con = _build(raw, tmp_path / "wh")
    order = con.execute(
        "select folder, commit_status, order_source from benchmark_snapshot order by commit_order"
    ).fetchall()
    assert {o[1] for o in order} == {"short"} and {o[2] for o in order} == {"commits.txt"}
    folders = [o[0] for o in order]
    # commits.txt is the order the folders were written: c7's run before c6's release run
    assert folders.index(clone.short("c7")) < folders.index(f"{clone.short('c6')}-v0.2.0")
    unknown = con.execute("select count(*) from measurements where commit_status = 'unknown'").fetchone()
    assert unknown == (0,)
