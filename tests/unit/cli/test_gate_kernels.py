"""`python -m pipeline.cli.gate_kernels`: the kernels a pull request touches, on a real git repository in
upstream's layout (tests/fixtures/bisect_repo.py): only kernels with a harness script, only commits that
touch their source under the one `touches_kernel` rule, from the merge base of a diverged branch."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.fixtures import bisect_repo
from tests.fixtures.runs import REPO


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> bisect_repo.BisectRepo:
    return bisect_repo.build(tmp_path_factory.mktemp("gate_kernels") / "liger")


def kernels(repo, base: str, head: str) -> tuple[int, list[str], str]:
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli.gate_kernels", str(repo.path), base, head],
                          cwd=REPO, capture_output=True, text=True)  # fmt: skip
    return proc.returncode, proc.stdout.split(), proc.stderr


def test_a_pr_touching_the_kernel_runs_it(repo):
    assert kernels(repo, repo.commits["readme2"], repo.commits["k0"])[:2] == (0, [bisect_repo.KERNEL])


def test_readme_and_unbenchmarked_files_run_nothing(repo):
    assert kernels(repo, repo.commits["base"], repo.commits["readme2"])[:2] == (0, [])
    # other_op.py changes, but upstream's harness has no benchmark_other_op.py
    assert kernels(repo, repo.commits["k0"], repo.commits["other1"])[:2] == (0, [])


def test_a_branch_is_judged_from_its_merge_base(repo, tmp_path):
    # the PR branched at readme2 and changed only the README; main moved on (k0 touched the kernel)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    git = ["git", "-C", str(clone), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "checkout", "-q", "-b", "pr", repo.commits["readme2"]], check=True)
    (clone / "README.md").write_text("pr\n")
    subprocess.run([*git, "commit", "-q", "-am", "pr: readme"], check=True)
    assert kernels(bisect_repo.BisectRepo(clone), repo.commits["tip"], "pr")[:2] == (0, [])


def test_an_unknown_revision_exits_2(repo):
    code, _, err = kernels(repo, "nosuchrev", repo.commits["k0"])
    assert code == 2 and "'nosuchrev' is not a commit" in err
