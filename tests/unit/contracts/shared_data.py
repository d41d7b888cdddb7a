"""Where the shared reference data lives: /work/shared/data beside the worktrees, found relative to the repo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SAMPLE_RECORD = REPO / "data_raw" / "kernelindex" / "a8e1599773300c7d.json"


def shared_data() -> Path | None:
    """`$LIGER_SHARED_DATA`, else `shared/data` beside the checkout (../shared for /work/main, ../../shared for
    a worktree under /work/wt/)."""
    candidates = [Path(os.environ["LIGER_SHARED_DATA"])] if os.environ.get("LIGER_SHARED_DATA") else []
    candidates += [REPO / ".." / "shared" / "data", REPO.parents[0] / ".." / "shared" / "data"]
    for candidate in candidates:
        if (candidate / "kernelindex_golden").is_dir():
            return candidate.resolve()
    return None


def require_shared_data() -> Path:
    data = shared_data()
    if data is None:
        pytest.skip("shared data (kernelindex_golden, liger_csv_history, liger_gh_pages) not found beside the repo; "
                    "set LIGER_SHARED_DATA to its folder")
    return data
