"""With a clone (LIGER_GIT_REPO): the base and head as full shas, an ``auto`` base (the newest commit the
warehouse benchmarked on the candidate's GPU that is an ancestor of head), and for each flagged kernel the
commits of base..head that touch its source (the one rule, ``history.paths.touches_kernel``, through
``history.suspects``)."""

from __future__ import annotations

from pathlib import Path

from pipeline.history import commits as history
from pipeline.history import git
from pipeline.history.git import GitError
from pipeline.outputs.gate.candidate import GateInputError

AUTO = "auto"


def resolve_head(repo: Path | None, head: str | None) -> str | None:
    """HEAD's full sha when the clone knows it; the text as given otherwise (None: not given)."""
    if not head:
        return None
    if repo is None:
        return head
    try:
        full = history.resolve_rev(repo, head)
    except GitError as exc:
        raise GateInputError(f"the clone {repo} is not usable: {exc}") from exc
    if full is None:
        raise GateInputError(f"head {head!r} is not a commit of the clone {repo}")
    return full


def resolve_commit(repo: Path | None, commit: str | None) -> str | None:
    """A benchmarked commit as the clone's full sha (the warehouse keeps a short one without a clone)."""
    if repo is None or not commit:
        return commit
    return history.resolve_rev(repo, commit) or commit


def auto_base(con, repo: Path | None, head: str | None, gpu: str) -> str:
    """The newest benchmarked commit with a run on ``gpu`` that is an ancestor of ``head``."""
    if repo is None or not head:
        raise GateInputError("BASE=auto needs a clone (LIGER_GIT_REPO) and the head commit (HEAD=)")
    rows = con.execute(
        """select benchmarked_commit from measurements where gpu_name = $gpu and benchmarked_commit is not null
           group by 1 order by max(commit_order) desc""",
        {"gpu": gpu},
    ).fetchall()
    for (commit,) in rows:
        full = history.resolve_rev(repo, commit)
        if full and history.is_ancestor(repo, full, head):
            return commit
    raise GateInputError(f"BASE=auto: no commit benchmarked on {gpu} is an ancestor of {head[:12]}")


def suspects_by_kernel(repo: Path | None, base_commit: str | None, head: str | None, kernels: set[str]) -> dict:
    """{kernel: [{sha, subject, committed_at}]} for the flagged kernels, or {"why": …} when not known."""
    if repo is None:
        return {"why": "no clone (LIGER_GIT_REPO): commits between base and head not known"}
    if not head:
        return {"why": "no head commit given (HEAD=): commits between base and head not known"}
    if not base_commit:
        return {"why": "the base has no benchmarked commit: commits between base and head not known"}
    base_full = history.resolve_rev(repo, base_commit)
    if base_full is None:
        return {"why": f"the base commit {base_commit[:12]} is not in the clone"}
    commit_range = history.commits_between(repo, base_full, head)
    found = {}
    for kernel in sorted(kernels):
        found[kernel] = [
            {"sha": c.sha, "subject": c.subject, "committed_at": c.committed_at.isoformat()}
            for c in history.suspects(commit_range, kernel)
        ]
    return {"base": base_full, "head": head, "commits": len(commit_range.commits), "kernels": found}


def benchmarked_kernels(checkout: Path, head: str) -> list[str]:
    """The kernels upstream's harness can run at ``head``: benchmark/scripts/benchmark_<kernel>.py."""
    out = git.run(git.open_repo(checkout), "ls-tree", "--name-only", head, "benchmark/scripts/").stdout.decode()
    names = (Path(line).name for line in out.splitlines())
    return sorted(n[len("benchmark_") : -3] for n in names if n.startswith("benchmark_") and n.endswith(".py"))


def touched_kernels(checkout: Path, base: str, head: str) -> list[str]:
    """The benchmarked kernels whose source the commits of merge-base(base, head)..head touch (the one
    rule, through ``history.suspects``): what a pull request's gate runs."""
    base_full, head_full = history.resolve_rev(checkout, base), history.resolve_rev(checkout, head)
    if base_full is None or head_full is None:
        raise GateInputError(f"{base if base_full is None else head!r} is not a commit of {checkout}")
    fork = history.merge_base(checkout, base_full, head_full) or base_full
    commit_range = history.commits_between(checkout, fork, head_full)
    return [k for k in benchmarked_kernels(checkout, head_full) if history.suspects(commit_range, k)]
