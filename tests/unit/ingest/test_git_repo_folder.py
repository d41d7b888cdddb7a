"""Issue 46 case 8: LIGER_GIT_REPO names the repository itself, never a folder inside one.

Before: `git -C <folder> rev-parse` looks upward, so a folder that is not a repository but lies inside
one (a bare clone copied without its empty `refs/` folder into another checkout, a plain folder, a
subfolder of a clone or of a bare repository) was read as the enclosing repository: "HEAD 5abd4f6…,
0 commits with CSV snapshots", SUCCESS. Now a refs-less bare copy is read as itself (through the shim)
and any other such folder is refused by name."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.history.git import GitError, open_repo
from pipeline.ingest.git_history import read_history
from tests.fixtures import git_repo as g
from tests.fixtures.runs import HEADER, row
from tests.unit.ingest.test_git_backfill import materialize

CSV = "benchmark/data/all_benchmark_data.csv"


@pytest.fixture()
def checkout(tmp_path) -> Path:
    """An enclosing checkout with one commit and no benchmark CSV (the repository git would read)."""
    outer = g.init_repo(tmp_path / "outer")
    (outer / "README").write_text("the enclosing checkout\n")
    g.commit(outer, "outer", "2025-01-01T00:00:00+00:00")
    return outer


def _clone_with_csv(path: Path) -> str:
    g.init_repo(path)
    (path / "benchmark" / "data").mkdir(parents=True)
    (path / CSV).write_text(HEADER + "\n" + row("1") + "\n")
    return g.commit(path, "csv", "2025-01-02T00:00:00+00:00")


def _bare_copy(clone: Path, dest: Path, *, without_refs: bool) -> Path:
    subprocess.run(["git", "clone", "-q", "--bare", str(clone), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "pack-refs", "--all"], check=True)
    if without_refs:
        shutil.rmtree(dest / "refs")
    return dest


def test_a_refs_less_bare_copy_inside_a_checkout_is_read_as_itself(checkout, tmp_path):
    head = _clone_with_csv(tmp_path / "clone")
    for without_refs in (True, False):
        bare = _bare_copy(tmp_path / "clone", checkout / f"copy{int(without_refs)}.git", without_refs=without_refs)
        history = read_history(bare, tmp_path / "cache")
        assert history.head == head and history.commits == 1 and len(history.sources) == 1


@pytest.mark.parametrize("place", ["plain_folder", "clone_subfolder", "bare_subfolder", "refs_less_subfolder"])
def test_a_folder_inside_a_repository_is_refused_by_name(checkout, tmp_path, place):
    _clone_with_csv(checkout / "clone")
    bare = _bare_copy(checkout / "clone", checkout / "bare.git", without_refs=False)
    refs_less = _bare_copy(checkout / "clone", checkout / "refs_less.git", without_refs=True)
    folder = {
        "plain_folder": checkout / "not_a_repo",
        "clone_subfolder": checkout / "clone" / "benchmark",
        "bare_subfolder": bare / "objects",
        "refs_less_subfolder": refs_less / "objects",
    }[place]
    folder.mkdir(exist_ok=True)
    with pytest.raises(GitError, match="not a git repository") as refused:
        open_repo(folder)
    assert str(folder.resolve()) in str(refused.value) and "LIGER_GIT_REPO" in str(refused.value)


def test_a_clone_its_git_dir_a_bare_repository_and_a_worktree_are_accepted(checkout, tmp_path):
    clone = checkout / "clone"
    _clone_with_csv(clone)
    bare = _bare_copy(clone, tmp_path / "bare.git", without_refs=False)
    g.git(clone, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert open_repo(clone) == (clone / ".git").resolve()
    assert open_repo(clone / ".git") == (clone / ".git").resolve()
    assert open_repo(bare) == bare.resolve()
    assert open_repo(tmp_path / "wt").resolve() == (clone / ".git" / "worktrees" / "wt").resolve()


def test_a_run_given_a_folder_inside_a_checkout_fails_by_name_and_commits_nothing(checkout, tmp_path):
    (checkout / "not_a_repo").mkdir()
    data_raw, wh = tmp_path / "data_raw", tmp_path / "wh"
    (data_raw / "liger_csv").mkdir(parents=True)
    (data_raw / "liger_csv" / "a.csv").write_text(HEADER + "\n" + row("1") + "\n")
    result = materialize(data_raw, wh, git_repo=str(checkout / "not_a_repo"), raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    message = str(failure.event_specific_data.error)
    assert "LIGER_GIT_REPO" in message and str((checkout / "not_a_repo").resolve()) in message
    assert not list((wh / "tables").rglob("*.json"))  # no Delta commit


def test_make_runs_input_check_leaves_the_refusal_to_the_ingest_step(checkout, tmp_path, monkeypatch):
    """`make run` fingerprints the clone before the job: a refused folder is no traceback there."""
    from pipeline.cli.run import _state
    from pipeline.config import load

    (checkout / "not_a_repo").mkdir()
    (tmp_path / "data_raw" / "liger_csv").mkdir(parents=True)
    monkeypatch.setenv("LIGER_DATA_RAW", str(tmp_path / "data_raw"))
    monkeypatch.setenv("LIGER_WAREHOUSE", str(tmp_path / "wh"))
    monkeypatch.setenv("LIGER_GIT_REPO", str(checkout / "not_a_repo"))
    state = _state(load(), {})
    assert json.loads(state["inputs"])["git_head"] is None
