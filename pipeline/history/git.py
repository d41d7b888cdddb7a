"""The git CLI, the one way this project reads a clone: no repository-location variables leak in,
no prompt, C locale, and a bare copy without its empty ``refs/`` folder is still readable."""

from __future__ import annotations

import atexit
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import GIT_REPO_ENV, child_env

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


_FULL_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class GitError(RuntimeError):
    """A clone that git does not accept, or a git command that failed; the message says which."""


def env() -> dict[str, str]:
    return child_env(_REPO_LOCATION_VARS, GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C")


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
    """The absolute git dir of a clone (work tree or bare); raises GitError when git does not accept it,
    or when git would read another repository: a folder inside a work tree or a bare repository that is
    not itself one (git looks upward) is refused by name, never read as the repository around it."""
    repo = Path(repo).expanduser()
    if not repo.is_dir():
        raise GitError(f"{GIT_REPO_ENV}={repo} is not a directory (expected a local Liger-Kernel clone)")
    real = repo.resolve()
    # first: `git -C` on a refs-less bare copy inside another work tree would answer with THAT repository
    if (real / "HEAD").is_file() and (real / "objects").is_dir() and not (real / "refs").exists():
        return _shim(real)
    proc = _rev_parse(repo, "--absolute-git-dir")
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip()
        raise GitError(f"{GIT_REPO_ENV}={real} is not a git repository: {detail}")
    git_dir = Path(proc.stdout.decode().strip())
    if git_dir.resolve() == real:  # a bare repository, or the git dir of a clone
        return git_dir
    top = _rev_parse(repo, "--show-toplevel")
    top_dir = Path(top.stdout.decode().strip()).resolve() if top.returncode == 0 else None
    if top_dir == real:  # the top of a work tree (its .git a folder, or a file naming one)
        return git_dir
    raise GitError(
        f"{GIT_REPO_ENV}={real} is not a git repository: it lies inside {top_dir or git_dir}, which git "
        "would read instead; name a clone's own folder"
    )


def _rev_parse(repo: Path, flag: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            ["git", "-C", str(repo), "rev-parse", flag], capture_output=True, env=env(), stdin=subprocess.DEVNULL
        )
    except FileNotFoundError as exc:
        raise GitError(f"the git CLI is not installed (needed for {GIT_REPO_ENV})") from exc


def refs_state(git_dir: Path) -> str:
    """HEAD and every ref's sha in one call: changes when main, a tag or gh-pages moves."""
    head = run(git_dir, "rev-parse", "--verify", "--quiet", "HEAD", check=False).stdout.decode().strip()
    refs = run(git_dir, "for-each-ref", "--format=%(objectname) %(refname)").stdout.decode()
    return head + "\n" + refs


class CatObject:
    """One answer of ``git cat-file --batch``: its type and size, and its bytes streamed from the
    pipe (read them before asking for the next object)."""

    def __init__(self, spec: str, type_: str, size: int, stream):
        self.spec, self.type, self.size, self._stream, self._left = spec, type_, size, stream, size

    def chunks(self, chunk: int = 1 << 20):
        while self._left:
            data = self._stream.read(min(self._left, chunk))
            if not data:
                raise GitError(f"git cat-file: truncated object {self.spec}")
            self._left -= len(data)
            yield data

    def read(self) -> bytes:
        return b"".join(self.chunks())


def cat_file_batch(git_dir: Path, specs: list[str]):
    """One ``git cat-file --batch`` for all ``specs`` (object names or ``<rev>:<path>``), in order:
    yields ``(spec, CatObject)``, or ``(spec, None)`` for a missing or ambiguous one. The names are
    fed from a thread, so a long list never deadlocks against the answers filling the pipe."""
    if not specs:
        return
    proc = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    writer = threading.Thread(target=_feed, args=(proc.stdin, "".join(f"{s}\n" for s in specs).encode()), daemon=True)
    writer.start()
    try:
        for spec in specs:
            header = proc.stdout.readline().decode(errors="replace").split()
            if len(header) == 3 and header[2].isdigit():
                obj = CatObject(spec, header[1], int(header[2]), proc.stdout)
                yield spec, obj
                for _ in obj.chunks():  # what the caller left unread
                    pass
                proc.stdout.read(1)  # the newline after each object
            elif header and header[-1] in ("missing", "ambiguous"):
                yield spec, None
            else:
                raise GitError(f"git cat-file: unexpected answer for {spec}: {' '.join(header) or 'EOF'}")
    finally:
        writer.join()
        proc.stdout.close()
        rc = proc.wait()
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
    if rc != 0:
        raise GitError(f"git cat-file --batch failed ({rc}): {err}")


def _feed(stdin, data: bytes) -> None:
    try:
        stdin.write(data)
    except BrokenPipeError:
        pass
    finally:
        try:
            stdin.close()
        except BrokenPipeError:
            pass


# ----------------------------------------------------------------------------------------------------------------
# the one rev-parse and the one `git log` parser


def is_full_sha(text: str) -> bool:
    return bool(_FULL_SHA.match(text))


def rev_parse(git_dir: Path, rev: str) -> str | None:
    """The full sha of the commit ``rev`` names (a short sha, branch, tag, HEAD), or None."""
    proc = run(git_dir, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and _FULL_SHA.match(out) else None


@dataclass(frozen=True)
class FileChange:
    """One file of a commit as ``--raw`` lists it (``--name-only``: the path alone): the new mode and
    blob (``None`` for names only), the status letter, and the path it has after the commit."""

    path: str
    mode: str | None = None
    blob: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class LogEntry:
    """One commit of ``git log``: the ``fields`` its format asked for, in order, and its files."""

    fields: tuple[str, ...]
    files: tuple[FileChange, ...] = ()


def log(
    git_dir: Path,
    *revs: str,
    fields: tuple[str, ...] = ("H",),
    files: str | None = None,
    options: tuple[str, ...] = (),
    paths: tuple[str, ...] = (),
    stdin: bytes | None = None,
) -> list[LogEntry]:
    """``git log`` of ``revs`` with NUL-separated output, parsed once for the whole project.

    ``fields`` are pretty-format placeholders without ``%`` (``H``, ``P``, ``cI``, ``s``);
    ``files`` is None, ``"names"`` (``--name-only``) or ``"raw"`` (``--raw --no-abbrev``: modes,
    blobs, status; merges as ``options`` say, e.g. ``--diff-merges=first-parent``). Paths are
    decoded as UTF-8 with surrogate escapes, so any byte a path holds survives a round trip."""
    fmt = "--format=%x01" + "%x00".join(f"%{f}" for f in fields) + "%x00"
    args = ["log", "-z", "--no-color", fmt, *options]
    if files == "names":
        args.append("--name-only")
    elif files == "raw":
        args += ["--raw", "--no-abbrev"]
    out = run(git_dir, *args, *revs, "--", *paths, stdin=stdin).stdout.decode("utf-8", errors="surrogateescape")
    entries = []
    for record in out.split("\x01")[1:]:
        tokens = record.split("\0")
        head = tuple(t.lstrip("\n") for t in tokens[: len(fields)])
        if len(head) < len(fields):
            continue
        rest = tokens[len(fields) :]
        changes = _raw_changes(rest) if files == "raw" else _name_changes(rest) if files else ()
        entries.append(LogEntry(head, changes))
    return entries


def _name_changes(tokens: list[str]) -> tuple[FileChange, ...]:
    return tuple(FileChange(p) for p in (t.lstrip("\n") for t in tokens) if p)


def _raw_changes(tokens: list[str]) -> tuple[FileChange, ...]:
    """``:<modes> <blobs> <status>`` then one path (two for a rename or copy of a one-parent diff);
    a combined diff of a merge (``::``) lists one mode and blob per parent, then the result's."""
    out, i = [], 0
    while i < len(tokens):
        tok = tokens[i].lstrip("\n")
        i += 1
        if not tok.startswith(":") or i >= len(tokens):
            continue
        parents = len(tok) - len(tok.lstrip(":"))
        cols = tok[parents:].split()
        modes, blobs, status = cols[: parents + 1], cols[parents + 1 : 2 * parents + 2], cols[-1]
        npaths = 2 if parents == 1 and status[:1] in ("R", "C") else 1
        path = tokens[min(i + npaths - 1, len(tokens) - 1)]
        i += npaths
        if len(modes) == parents + 1 and len(blobs) == parents + 1:
            out.append(FileChange(path, modes[-1], blobs[-1], status))
    return tuple(out)
