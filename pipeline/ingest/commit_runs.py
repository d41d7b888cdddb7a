"""Our own harness runs at commits (the bisect's): ``**/commit_runs/<sha>/<run id>/all_benchmark_data.csv``.

Each such file is one run of one commit, exactly as a gh-pages snapshot is (docs/commits.md): the
source carries the commit as its folder, so ``benchmark_snapshot`` orders it on main's first-parent
chain, its rows get ``benchmarked_commit`` = that sha, and two runs of one commit are two runs of one
step, never a pair. ``origin`` says ``bisect`` (``gate`` for
a run `make gate RECORD=1` recorded); ``environment`` is the ``environment.json`` beside the
CSV (GPU, driver, CUDA, torch, Triton, Python, host), as canonical JSON text (RFC 8785: a nested value
stays JSON), when there is one. It is read as untrusted input (`read_environment`): a regular file
whose real path stays under the data root, at most ENV_MAX_BYTES, nested at most ENV_MAX_DEPTH deep,
a JSON object. Any other is quarantined as a problem with its reason code while the run's rows land
with no environment. Its toolchain (driver, CUDA, torch, Triton) fills the run's derived
ExecutionEnvironment at the model (`model/dimensions.toolchain`; docs/identity.md).
They are read under data_raw/ and under the warehouse's ``bisect/`` folder, where `make bisect`
writes them (source path ``bisect:<path under it>``).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from pipeline.contracts.digests import CanonicalizationError, canonical_json
from pipeline.contracts.reasons import Reason
from pipeline.contracts.sources import CSV_KIND, SourceFile

COMMIT_RUNS_DIR = "commit_runs"
CSV_NAME = "all_benchmark_data.csv"
ENVIRONMENT_JSON = "environment.json"
ORIGIN = "bisect"
BISECT_PREFIX = "bisect:"
# `make gate RECORD=1` writes the candidate under <warehouse>/bisect/gate/: a run of its commit like the
# bisect's, whose origin says it came from the gate
GATE_DIR = "gate"
GATE_ORIGIN = "gate"
_SHA = re.compile(r"^[0-9a-f]{40}$")
ENV_MAX_BYTES = 64 * 1024  # the harness writes a few hundred bytes
ENV_MAX_DEPTH = 16  # the harness writes a flat object
_NESTING = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')  # strings (skipped) and brackets

Problem = tuple[str, str, str]  # (source path, reason code, detail), as discovery's problems


def is_full_sha(text: str) -> bool:
    return bool(_SHA.match(text))


def commit_run_of(csv_path: Path) -> tuple[str, str] | None:
    """(commit, run id) when ``csv_path`` is ``…/commit_runs/<full sha>/<run id>/all_benchmark_data.csv``."""
    parts = csv_path.parts
    if len(parts) < 4 or parts[-1] != CSV_NAME or parts[-4] != COMMIT_RUNS_DIR or not _SHA.match(parts[-3]):
        return None
    return parts[-3], parts[-2]


def _depth(data: bytes) -> int:
    """How deep brackets nest in JSON ``data``, counted without parsing (so no parser recursion)."""
    depth = deepest = 0
    for m in _NESTING.finditer(data):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _read_bounded(path: Path, root: Path) -> bytes:
    """The bytes of ``path``; ValueError (reason, detail) for a file that is not read."""
    real = path.resolve()
    if not real.is_relative_to(root):
        raise ValueError(Reason.UNREADABLE_FILE, "a symlink to outside the data root, never followed")
    # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(Reason.UNREADABLE_FILE, "not a regular file (a FIFO, a device, a folder)")
        data = fh.read(ENV_MAX_BYTES + 1)
    if len(data) > ENV_MAX_BYTES:
        raise ValueError(Reason.FILE_TOO_LARGE, f"over {ENV_MAX_BYTES:,} bytes")
    return data


def read_environment(csv_path: Path, root: Path) -> tuple[str | None, tuple[str, str] | None]:
    """environment.json beside the CSV: (its canonical JSON text, None), (None, None) when there is
    none, or (None, (reason code, detail)) when it is refused: the rows still land, without it."""
    path = csv_path.parent / ENVIRONMENT_JSON
    if not os.path.lexists(path):
        return None, None
    try:
        data = _read_bounded(path, root.resolve())
        if _depth(data) > ENV_MAX_DEPTH:
            raise ValueError(Reason.JSON_TOO_DEEP, f"nested over {ENV_MAX_DEPTH} deep")
        try:
            env = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, RecursionError, ValueError) as exc:
            raise ValueError(Reason.TRUNCATED_JSON, f"not JSON: {exc}") from exc
        if not isinstance(env, dict):
            raise ValueError(Reason.NOT_AN_OBJECT, f"a JSON {type(env).__name__}, not an object")
        return canonical_json(env), None
    except CanonicalizationError as exc:
        return None, (str(Reason.TRUNCATED_JSON), f"{ENVIRONMENT_JSON}: not canonical JSON: {exc}")
    except ValueError as exc:
        reason, detail = exc.args if len(exc.args) == 2 else (Reason.TRUNCATED_JSON, str(exc))
        return None, (str(reason), f"{ENVIRONMENT_JSON}: {detail}")
    except OSError as exc:
        return None, (str(Reason.UNREADABLE_FILE), f"{ENVIRONMENT_JSON}: {exc.strerror or exc}")


def mark(src: SourceFile, root: Path, problems: list[Problem]) -> bool:
    """Make ``src`` a run of its commit when its path is a commit run; whether it is one. A refused
    environment.json (under ``root``, the data root) is added to ``problems``."""
    found = commit_run_of(src.path)
    if found is None:
        return False
    src.gh_pages_folder = found[0]
    src.run_origin = GATE_ORIGIN if src.source_path.startswith(f"{BISECT_PREFIX}{GATE_DIR}/") else ORIGIN
    src.environment, refused = read_environment(src.path, root)
    if refused is not None:
        where = src.source_path.rpartition("/")[0]
        problems.append((f"{where}/{ENVIRONMENT_JSON}", *refused))
    return True


def discover_bisect_folder(root: Path | None, problems: list[Problem]) -> list[SourceFile]:
    """Every commit run under the warehouse's bisect folder (none when it does not exist); refused
    environment files are added to ``problems``."""
    if root is None or not root.is_dir():
        return []
    root = root.resolve()
    out = []
    for p in sorted(root.rglob(f"{COMMIT_RUNS_DIR}/*/*/{CSV_NAME}")):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(root).as_posix()
        src = SourceFile(path=p, source_path=BISECT_PREFIX + rel, kind=CSV_KIND, size_bytes=p.stat().st_size)
        if mark(src, root, problems):
            out.append(src)
    return out
