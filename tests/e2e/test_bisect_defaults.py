"""issue 55: the bisect judges interleaved runs by their own spread against MIN_EFFECT, and picks its
sweep when none is given. A real git repository in upstream's layout whose harness reports a value
computed from the code with seeded noise (tests/fixtures/bisect_repo.py): nothing here is a timing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import materialize
from tests.fixtures import bisect_repo, bisect_warehouse
from tests.fixtures.runs import REPO, run_env


def make_bisect(tmp: Path, repo: bisect_repo.BisectRepo, **vars: str) -> dict:
    """`make bisect` (no ingest) against the warehouse at tmp/wh; the result.json it wrote."""
    (tmp / "raw").mkdir(exist_ok=True)
    env = run_env(tmp / "raw", tmp / "wh", tmp / "dagster_home", LIGER_GIT_REPO=str(repo.path))
    args = [f"{k}={v}" for k, v in {"KERNEL": bisect_repo.KERNEL, "NO_INGEST": "1", **vars}.items()]
    proc = subprocess.run(["make", "-s", "bisect", *args], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (folder,) = [p for p in (tmp / "wh" / "bisect").iterdir() if p.is_dir()]
    return json.loads((folder / "result.json").read_text()) | {"_md": (folder / "result.md").read_text()}


@pytest.fixture(scope="module")
def modest(tmp_path_factory) -> tuple[bisect_repo.BisectRepo, dict]:
    """A x1.3 planted among six candidates; the warehouse's CI history for the device says +-50 %."""
    tmp = tmp_path_factory.mktemp("modest")
    repo = bisect_repo.build(tmp / "repo", factor=1.3)
    (tmp / "raw").mkdir()
    bisect_warehouse.noisy_history(tmp / "raw", repo)
    assert materialize(tmp / "raw", tmp / "wh", git_repo=repo.path).success
    return repo, make_bisect(tmp, repo, FROM=repo.commits["base"], TO="main")


def test_a_modest_slowdown_is_found_with_the_defaults_though_ci_noise_is_50_percent(modest):
    repo, result = modest
    assert result["outcome"] == "culprit" and result["culprit"] == repo.commits["planted"]
    assert 1.25 < result["ratio"]["to_over_from"] < 1.35 and result["ratio"]["p_value"] < 0.05
    assert result["harness_runs"] <= 40
    # the bar is the minimum effect; the warehouse's CI noise is context, said as such
    assert (result["min_effect"], result["min_effect_source"]) == (0.05, "documented default for speed")
    assert result["ci_noise"]["threshold"] == pytest.approx(0.5, abs=1e-3)
    assert result["ci_noise"]["source"].startswith("measured: 6 re-run sweeps of speed on CPU (test)")
    assert "CI noise, as context**: ±50.0%" in result["_md"]


def test_without_pass_the_sweep_is_what_the_first_run_at_from_wrote(modest):
    _, result = modest
    # no flagged toyop sweep in the warehouse; the harness writes forward and full: upstream's visualizer
    # draws full first
    assert (result["pass"], result["metric"]) == ("full", "speed")
    assert result["sweep_source"] == "what the first run at FROM wrote"


def test_a_change_below_the_minimum_effect_is_not_reproduced(tmp_path):
    repo = bisect_repo.build(tmp_path / "repo", factor=1.02)
    result = make_bisect(tmp_path, repo, FROM=repo.commits["base"], TO="main", MIN_EFFECT="0.05")
    # the rank test separates the runs (the shift is real), but the whole interval is within 5 %
    assert result["outcome"] == "not_reproduced" and result["culprit"] is None
    assert 1.0 < result["ratio"]["to_over_from"] < 1.05 and result["ratio"]["high"] < 1.05
    assert result["min_effect_source"] == "given (MIN_EFFECT=)"


def test_the_same_change_is_a_culprit_with_no_minimum_effect(tmp_path):
    repo = bisect_repo.build(tmp_path / "repo", factor=1.02)
    result = make_bisect(tmp_path, repo, FROM=repo.commits["base"], TO="main", MIN_EFFECT="0")
    assert result["outcome"] == "culprit" and result["culprit"] == repo.commits["planted"]


@pytest.fixture(scope="module")
def forward_only(tmp_path_factory) -> bisect_repo.BisectRepo:
    return bisect_repo.build(tmp_path_factory.mktemp("fwd") / "repo", factor=1.3, modes=("forward",))


def test_a_harness_that_writes_only_forward_rows_bisects_without_pass(forward_only, tmp_path):
    result = make_bisect(tmp_path, forward_only, FROM=forward_only.commits["base"], TO="main")
    assert result["outcome"] == "culprit" and result["culprit"] == forward_only.commits["planted"]
    assert result["pass"] == "forward" and result["sweep_source"] == "what the first run at FROM wrote"


def test_a_run_without_the_judged_sweep_names_the_passes_it_wrote(forward_only, tmp_path):
    result = make_bisect(tmp_path, forward_only, FROM=forward_only.commits["base"], TO="main", PASS="backward")
    assert result["outcome"] == "harness_failed" and result["harness_runs"] == 1
    reason = result["runs"][0]["reason"]
    # narrowed to backward, the harness ran nothing: the reason says what it offers
    assert "narrowed to / backward" in reason and "it offers the passes speed: forward; memory: forward" in reason
