"""The git CLI, the one way this project reads a clone: no repository-location variables leak in,
no prompt, C locale, and a bare copy without its empty ``refs/`` folder is still readable."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from pipeline.config import GIT_REPO_ENV

# Variables that would point git at another repository than the one we were given.
_REPO_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
)


class GitError(RuntimeError):
    """A clone that git does not accept, or a git command that failed; the message says which."""


def env() -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if k not in _REPO_LOCATION_VARS}
    clean.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return clean


def run(git_dir: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["git", "--git-dir", str(git_dir), "-c", "core.quotepath=false", "-c", "log.showSignature=false", *args]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, env=env(), input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL
        )
    except FileNotFoundError as exc:
        raise GitError(f"the git CLI is not installed (needed for {GIT_REPO_ENV})") from exc
    if check and proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip()
        raise GitError(f"git {' '.join(args[:2])} failed in {git_dir}: {detail}")
    return proc


_SHIMS: dict[Path, Path] = {}


def _shim(git_dir: Path) -> Path:
    """git refuses a bare repository copied without its (empty) ``refs/`` folder. Read it through a
    throw-away git dir: empty ``refs/``, a symlink to its ``objects/``, copies of HEAD, packed-refs, config."""
    if git_dir in _SHIMS:
        return _SHIMS[git_dir]
    tmp = Path(tempfile.mkdtemp(prefix="liger-git-shim-"))
    atexit.register(shutil.rmtree, tmp, True)
    (tmp / "refs" / "heads").mkdir(parents=True)
    (tmp / "refs" / "tags").mkdir()
    (tmp / "objects").symlink_to(git_dir / "objects", target_is_directory=True)
    for name in ("HEAD", "packed-refs", "config", "shallow"):
        if (git_dir / name).is_file():
            shutil.copyfile(git_dir / name, tmp / name)
    _SHIMS[git_dir] = tmp
    return tmp


def open_repo(repo: Path) -> Path:
    """The absolute git dir of a clone (work tree or bare); raises GitError when git does not accept it."""
    repo = Path(repo).expanduser()
    if not repo.is_dir():
        raise GitError(f"{GIT_REPO_ENV}={repo} is not a directory (expected a local Liger-Kernel clone)")
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--absolute-git-dir"],
            capture_output=True,
            env=env(),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise GitError(f"the git CLI is not installed (needed for {GIT_REPO_ENV})") from exc
    if proc.returncode == 0:
        return Path(proc.stdout.decode().strip())
    repo = repo.resolve()
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir() and not (repo / "refs").exists():
        return _shim(repo)
    detail = proc.stderr.decode(errors="replace").strip()
    raise GitError(f"{GIT_REPO_ENV}={repo} is not a git repository: {detail}")


def refs_state(git_dir: Path) -> str:
    """HEAD and every ref's sha in one call: changes when main, a tag or gh-pages moves."""
    head = run(git_dir, "rev-parse", "--verify", "--quiet", "HEAD", check=False).stdout.decode().strip()
    refs = run(git_dir, "for-each-ref", "--format=%(objectname) %(refname)").stdout.decode()
    return head + "\n" + refs
