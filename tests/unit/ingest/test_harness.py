"""The harness rule (issue 54): which commits change how a kernel is measured. A real git repo built here:
a commit changing only a benchmark script, one changing a helper of benchmark/scripts/utils.py that one
script calls, one adding a helper nobody calls, one touching only comments of utils.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.history import commits as gp
from pipeline.history.paths import changed_definitions, touches_harness, used_definitions
from tests.fixtures.gh_pages_repo import git

UTILS = """\
def run_speed_benchmark(fn):
    return _time(fn, rep=500)


def run_memory_benchmark(fn):
    return fn()


def _time(fn, rep):
    return [fn() for _ in range(rep)]
"""
RMS_NORM = "from utils import run_speed_benchmark\n\nrun_speed_benchmark(lambda: 1)\n"
SWIGLU = "from utils import run_memory_benchmark\n\nrun_memory_benchmark(lambda: 2)\n"


def _commit(repo: Path, message: str, day: int, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=f"2025-05-{day:02d}T12:00:00+00:00")
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def harness_repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    repo = tmp_path_factory.mktemp("harness") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    s = "benchmark/scripts/"
    first = {f"{s}utils.py": UTILS, f"{s}benchmark_rms_norm.py": RMS_NORM, f"{s}benchmark_swiglu.py": SWIGLU}
    unused = "\n\ndef unused():\n    return 0\n"
    fewer = UTILS.replace("rep=500", "rep=10")
    c = {"h0": _commit(repo, "init", 1, {**first, "src/liger_kernel/ops/rms_norm.py": "x = 1\n"})}
    c["h1"] = _commit(repo, "bench: swiglu script only", 2, {f"{s}benchmark_swiglu.py": SWIGLU + "# warm up\n"})
    c["h2"] = _commit(repo, "utils: comments", 3, {f"{s}utils.py": "# timing\n" + UTILS.replace("fn()", "fn( )")})
    c["h3"] = _commit(repo, "utils: a new helper", 4, {f"{s}utils.py": UTILS + unused})
    c["h4"] = _commit(repo, "utils: fewer reps", 5, {f"{s}utils.py": fewer + unused})
    c["h5"] = _commit(repo, "utils: _time", 6, {f"{s}utils.py": fewer.replace("range(rep)", "range(rep + 1)") + unused})
    return repo, c


def test_changed_definitions_compare_asts_not_text():
    assert changed_definitions(UTILS, "# c\n" + UTILS.replace("fn()", "fn( )")) == frozenset()
    assert changed_definitions(UTILS, UTILS.replace("rep=500", "rep=10")) == {"run_speed_benchmark"}
    assert changed_definitions(UTILS, UTILS + "\ndef unused():\n    return 0\n") == {"unused"}
    assert changed_definitions(UTILS, "def broken(:\n") == {"run_speed_benchmark", "run_memory_benchmark", "_time"}


def test_used_definitions_follow_helpers_of_helpers():
    assert used_definitions(RMS_NORM, UTILS) == {"run_speed_benchmark", "_time"}
    assert used_definitions(SWIGLU, UTILS) == {"run_memory_benchmark"}


def test_each_commit_changes_the_harness_of_the_kernels_it_measures_differently(harness_repo):
    repo, c = harness_repo
    commits = {h.sha: h for h in gp.commits_between(repo, c["h0"], c["h5"]).commits}
    per = {name: {k: touches_harness(commits[c[name]].harness_changes, k) for k in ("rms_norm", "swiglu")}
           for name in ("h1", "h2", "h3", "h4", "h5")}  # fmt: skip
    # a commit that changes only a benchmark script changes that kernel's harness, no other's
    assert per["h1"] == {"rms_norm": (), "swiglu": ("benchmark_swiglu.py",)}
    assert commits[c["h1"]].kernel_paths == ()
    # comments and formatting of utils.py, and a helper no script calls, change nothing
    assert per["h2"] == {"rms_norm": (), "swiglu": ()} and per["h3"] == {"rms_norm": (), "swiglu": ()}
    # a helper rms_norm's script calls (and its helper's helper) changes rms_norm's, not swiglu's
    assert per["h4"] == {"rms_norm": ("utils.py:run_speed_benchmark",), "swiglu": ()}
    assert per["h5"] == {"rms_norm": ("utils.py:_time",), "swiglu": ()}
    # the kernel name's config suffix and a fused variant follow the script, as touches_kernel does
    assert touches_harness(commits[c["h1"]].harness_changes, "swiglu_beta=False") == ("benchmark_swiglu.py",)
    assert touches_harness(commits[c["h4"]].harness_changes, "fused_add_rms_norm") != ()


def test_commit_ranges_carry_harness_changes(harness_repo):
    repo, c = harness_repo
    ranges = gp.commits_between(repo, c["h0"], c["h1"])
    assert [h.harness_changes for h in ranges.commits] == [("benchmark/scripts/benchmark_swiglu.py",)]
