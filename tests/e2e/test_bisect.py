"""`make bisect` on a real git repository in upstream's layout whose harness reports a value computed
from the code with seeded noise (tests/fixtures/bisect_repo.py): no mock of git or of the harness.
Nothing here asserts on time."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.fixtures import bisect_repo
from tests.fixtures.runs import REPO, run_env

RUNNER = REPO / "pipeline" / "bisect" / "runner.py"


def make_bisect(tmp: Path, repo: bisect_repo.BisectRepo, **vars: str) -> dict:
    env = run_env(tmp / "raw", tmp / "wh", tmp / "dagster_home", LIGER_GIT_REPO=str(repo.path))
    (tmp / "raw").mkdir(exist_ok=True)
    args = [
        f"{k}={v}"
        for k, v in {
            "KERNEL": bisect_repo.KERNEL,
            "PASS": "forward",
            "METRIC": "speed",
            "NO_INGEST": "1",
            **vars,
        }.items()
    ]
    proc = subprocess.run(["make", "-s", "bisect", *args], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (folder,) = [p for p in (tmp / "wh" / "bisect").iterdir() if p.is_dir()]
    return json.loads((folder / "result.json").read_text()) | {"_folder": str(folder)}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> bisect_repo.BisectRepo:
    return bisect_repo.build(tmp_path_factory.mktemp("bisect") / "repo")


@pytest.fixture(scope="module")
def culprit_run(repo, tmp_path_factory) -> tuple[dict, Path]:
    tmp = tmp_path_factory.mktemp("culprit")
    # the planted slowdown is x5, the harness's values are computed (seeded noise of +-1 %), not timed
    return make_bisect(tmp, repo, FROM=repo.commits["base"], TO="main"), tmp


def test_make_bisect_names_the_planted_commit(repo, culprit_run):
    result, _ = culprit_run
    assert result["outcome"] == "culprit"
    assert result["culprit"] == repo.commits["planted"]
    assert result["culprit_subject"].startswith("planted:")
    assert result["ratio"]["to_over_from"] > 2 and result["ratio"]["low"] > 1.5
    assert len(result["candidates"]) == 6 and repo.commits["other1"] not in result["candidates"]
    # bounded: both ends up to the cap, then at most ceil(log2(6 + 1)) + 1 skip steps of at most the cap each
    cap = result["max_runs"]
    assert result["harness_runs"] <= 2 * cap + (math.ceil(math.log2(7)) + 1) * cap
    assert result["min_effect_source"] == "documented default for speed"


def test_a_broken_harness_is_skipped(repo, culprit_run):
    result, _ = culprit_run
    assert [s["commit"] for s in result["skipped"]] == [repo.commits["broken"]]
    assert "exited with 1" in result["skipped"][0]["reason"]
    assert repo.commits["broken"][:12] in Path(result["_folder"], "result.md").read_text()


def test_every_run_is_written_with_its_environment(culprit_run):
    result, _ = culprit_run
    folder = Path(result["_folder"])
    ok = [r for r in result["runs"] if r["ok"]]
    for r in ok:
        run = folder / "commit_runs" / r["commit"] / r["run_id"]
        rows = (run / "all_benchmark_data.csv").read_text().splitlines()
        assert rows[0].startswith("kernel_name,kernel_provider") and "OLD GPU" not in "".join(rows)
        assert all(",forward,speed," in line for line in rows[1:])  # narrowed to the judged sweep
        env = json.loads((run / "environment.json").read_text())
        assert env["python"] and env["gpu"] == "not recorded"
    assert (
        "0.2.0"
        in (folder / "commit_runs" / result["to_commit"] / ok[1]["run_id"] / "all_benchmark_data.csv").read_text()
    )


def test_no_kernel_change_runs_nothing(repo, tmp_path):
    result = make_bisect(tmp_path, repo, FROM=repo.commits["base"], TO=repo.commits["readme2"])
    assert result["outcome"] == "no_kernel_change"
    assert result["harness_runs"] == 0 and result["candidates"] == []
    assert not (Path(result["_folder"]) / "commit_runs").exists()
    assert result["ci_noise"]["source"].startswith("documented default")


def test_confirm_reruns_both_ends(repo, tmp_path):
    # the same kernel code at both ends: the same values up to the harness's seeded +-1 %
    result = make_bisect(tmp_path, repo, FROM=repo.commits["base"], TO=repo.commits["readme2"], CONFIRM="1")
    assert result["outcome"] == "not_reproduced"
    assert result["harness_runs"] >= 6
    assert set(result["commits_run"]) == {repo.commits["base"], repo.commits["readme2"]}


def test_the_runner_needs_only_the_standard_library(culprit_run, tmp_path):
    folder = Path(culprit_run[0]["_folder"])
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); import runner, harness, judge, ranktest, result_md, harness_shim;"
        "ours = ('__main__', 'runner', 'harness', 'judge', 'ranktest', 'result_md', 'harness_shim');"
        "bad = sorted(m.split('.')[0] for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names"
        " and m.split('.')[0] not in ours);"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(RUNNER.parent)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = tmp_path / "plan.json"
    # a plan without candidates and without CONFIRM: no harness run, under -I -S
    data = json.loads((folder / "plan.json").read_text()) | {"candidates": []}
    plan.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(RUNNER), str(plan), str(tmp_path / "out")], capture_output=True
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "out" / "result.json").read_text())["outcome"] == "no_kernel_change"


def test_commit_runs_land_as_runs_of_their_commit(repo, culprit_run):
    result, tmp = culprit_run
    env = run_env(tmp / "raw", tmp / "wh", tmp / "dagster_home", LIGER_GIT_REPO=str(repo.path))
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.cli.bisect", "ingest"], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ok = [r for r in result["runs"] if r["ok"]]
    with duckdb.connect(str(tmp / "wh" / "liger.duckdb"), read_only=True) as con:
        snaps = con.sql("select commit, origin, environment from benchmark_snapshot where origin = 'bisect'").fetchall()
        assert len(snaps) == len(ok)
        assert all(json.loads(e)["gpu"] == "not recorded" for _, _, e in snaps)
        runs = dict(con.sql("select commit, runs from benchmark_commit").fetchall())
        planted = repo.commits["planted"]
        assert runs[planted] == sum(1 for r in ok if r["commit"] == planted)  # one step, several runs
        steps = con.execute(
            "select count(distinct commit_order) from measurements where benchmarked_commit = ?", [planted]
        ).fetchone()
        assert steps == (1,)
