"""Our own harness runs at commits (the bisect's): ``**/commit_runs/<sha>/<run id>/all_benchmark_data.csv``.

Each such file is one run of one commit, exactly as a gh-pages snapshot is (docs/commits.md): the
source carries the commit as its folder, so ``benchmark_snapshot`` orders it on main's first-parent
chain, its rows get ``benchmarked_commit`` = that sha, and two runs of one commit are two runs of one
step, never a pair. ``origin`` says ``bisect`` (``gate`` for
a run `make gate RECORD=1` recorded); ``environment`` is the ``environment.json`` beside the
CSV (GPU, driver, CUDA, torch, Triton, Python, host), as canonical JSON text, when there is one.
They are read under data_raw/ and under the warehouse's ``bisect/`` folder, where `make bisect`
writes them (source path ``bisect:<path under it>``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def is_full_sha(text: str) -> bool:
    return bool(_SHA.match(text))


def commit_run_of(csv_path: Path) -> tuple[str, str] | None:
    """(commit, run id) when ``csv_path`` is ``…/commit_runs/<full sha>/<run id>/all_benchmark_data.csv``."""
    parts = csv_path.parts
    if len(parts) < 4 or parts[-1] != CSV_NAME or parts[-4] != COMMIT_RUNS_DIR or not _SHA.match(parts[-3]):
        return None
    return parts[-3], parts[-2]


def environment_of(csv_path: Path) -> str | None:
    """environment.json beside the CSV as canonical JSON text; None when absent or not a JSON object
    (the rows still land: an unreadable environment is no environment, not a reason to drop a run)."""
    p = csv_path.parent / ENVIRONMENT_JSON
    try:
        env = json.loads(p.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(env, dict):
        return None
    return json.dumps({str(k): str(v) for k, v in env.items()}, sort_keys=True, ensure_ascii=False)


def mark(src: SourceFile) -> bool:
    """Make ``src`` a run of its commit when its path is a commit run; whether it is one."""
    found = commit_run_of(src.path)
    if found is None:
        return False
    src.gh_pages_folder = found[0]
    src.run_origin = GATE_ORIGIN if src.source_path.startswith(f"{BISECT_PREFIX}{GATE_DIR}/") else ORIGIN
    src.environment = environment_of(src.path)
    return True


def discover_bisect_folder(root: Path | None) -> list[SourceFile]:
    """Every commit run under the warehouse's bisect folder (none when it does not exist)."""
    if root is None or not root.is_dir():
        return []
    root = root.resolve()
    out = []
    for p in sorted(root.rglob(f"{COMMIT_RUNS_DIR}/*/*/{CSV_NAME}")):
        if not p.is_file() or p.is_symlink():
            continue
        rel = p.relative_to(root).as_posix()
        src = SourceFile(path=p, source_path=BISECT_PREFIX + rel, kind=CSV_KIND, size_bytes=p.stat().st_size)
        if mark(src):
            out.append(src)
    return out
