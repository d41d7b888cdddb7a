"""Build a small Liger-Kernel-like git repo from the shipped history in data_raw/liger_csv
(not a conftest: import explicitly).

Each upstream commit in SNAPSHOTS.tsv becomes one test commit, in date order, with its
snapshot(s) written at their upstream paths and GIT_AUTHOR_DATE/GIT_COMMITTER_DATE set to the
upstream ``committed_at``. The commit message carries the original sha.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from collections import defaultdict
from datetime import datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
HISTORY = Path(os.environ.get("LIGER_CSV_HISTORY", REPO_ROOT / "data_raw" / "liger_csv"))  # the shipped snapshots


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
    )
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def init_repo(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def commit(repo: Path, message: str, date: str, *extra: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, *extra, date=date)
    return git(repo, "rev-parse", "HEAD")


def snapshot_rows() -> list[dict[str, str]]:
    with (HISTORY / "SNAPSHOTS.tsv").open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def build_history_repo(repo: Path, limit: int | None = None) -> dict[str, str]:
    """Commit every upstream snapshot in date order. Returns {original upstream sha: test commit sha}."""
    init_repo(repo)
    (repo / "README.md").write_text("Liger-Kernel test clone\n")
    commit(repo, "initial: no benchmark data yet", "2024-01-01T00:00:00+00:00")
    by_commit: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in snapshot_rows():
        by_commit[row["upstream_commit"]].append(row)
    ordered = sorted(by_commit.items(), key=lambda kv: datetime.fromisoformat(kv[1][0]["committed_at"]))
    mapping: dict[str, str] = {}
    for upstream_sha, rows in ordered[:limit]:
        for row in rows:
            dest = repo / row["upstream_path"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HISTORY / row["file"], dest)
        mapping[upstream_sha] = commit(repo, f"benchmark data (upstream {upstream_sha})", rows[0]["committed_at"])
    return mapping
