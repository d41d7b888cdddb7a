"""Cheap change detection for the ingestion sensor (no Dagster imports).

A fingerprint of data_raw is every regular, non-hidden file's relative path, size, mtime and
content sha256; the sha is only recomputed for files whose (size, mtime_ns) differ from the
previous fingerprint, so an idle tick costs one directory walk and a few stats. With a git repo
configured the fingerprint also carries the repo's HEAD sha (one ``git rev-parse``).

The *digest* of a fingerprint covers paths, content shas and the git HEAD only: touching a file
without changing it updates the stored mtime but not the digest, so it triggers nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.contracts.sources import file_sha256

CURSOR_VERSION = 1


@dataclass
class Fingerprint:
    files: dict[str, list] = field(default_factory=dict)  # rel path -> [size, mtime_ns, sha256]
    git_repo: str | None = None
    git_head: str | None = None
    runs: int = 0  # run requests issued so far (part of the run_key)

    @property
    def digest(self) -> str:
        h = hashlib.sha256()
        for rel in sorted(self.files):
            h.update(f"{rel}\0{self.files[rel][2]}\n".encode("utf-8", errors="surrogateescape"))
        h.update(f"git\0{self.git_repo or ''}\0{self.git_head or ''}".encode())
        return h.hexdigest()

    def to_cursor(self) -> str:
        return json.dumps(
            {
                "v": CURSOR_VERSION,
                "files": self.files,
                "git_repo": self.git_repo,
                "git_head": self.git_head,
                "runs": self.runs,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_cursor(cls, cursor: str | None) -> Fingerprint | None:
        if not cursor:
            return None
        try:
            data = json.loads(cursor)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("v") != CURSOR_VERSION:
            return None
        return cls(
            files=data.get("files") or {},
            git_repo=data.get("git_repo"),
            git_head=data.get("git_head"),
            runs=int(data.get("runs") or 0),
        )


def scan_data_raw(data_raw: Path, previous: Fingerprint | None = None) -> dict[str, list]:
    """rel path -> [size, mtime_ns, sha256] for every regular non-hidden file (symlinks are not followed)."""
    old = previous.files if previous else {}
    out: dict[str, list] = {}
    if not data_raw.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(data_raw):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.startswith("."):
                continue
            p = Path(dirpath) / name
            try:
                st = p.lstat()
            except OSError:
                continue
            if not p.is_file() or p.is_symlink():
                continue
            rel = p.relative_to(data_raw).as_posix()
            prev = old.get(rel)
            if prev and prev[0] == st.st_size and prev[1] == st.st_mtime_ns:
                out[rel] = [st.st_size, st.st_mtime_ns, prev[2]]
                continue
            try:
                out[rel] = [st.st_size, st.st_mtime_ns, file_sha256(p)]
            except OSError:
                continue
    return out


def describe_change(old: Fingerprint | None, new: Fingerprint) -> str:
    """Short human summary: 'first scan', 'added 1, changed 2, removed 0, git HEAD abc123 -> def456'."""
    if old is None:
        return f"first scan: {len(new.files)} files" + (f", git HEAD {new.git_head[:12]}" if new.git_head else "")
    added = sorted(set(new.files) - set(old.files))
    removed = sorted(set(old.files) - set(new.files))
    changed = sorted(k for k in set(new.files) & set(old.files) if new.files[k][2] != old.files[k][2])
    parts = []
    for label, items in (("added", added), ("changed", changed), ("removed", removed)):
        if items:
            parts.append(f"{label} {len(items)} ({', '.join(items[:3])}{', ...' if len(items) > 3 else ''})")
    if (old.git_repo, old.git_head) != (new.git_repo, new.git_head):
        parts.append(f"git HEAD {(old.git_head or 'none')[:12]} -> {(new.git_head or 'none')[:12]}")
    return "; ".join(parts) or "no change"


def run_key(old: Fingerprint | None, new: Fingerprint) -> str:
    """Unique per transition (so A -> B -> A runs again) yet stable if a tick is retried with the same cursor."""
    prev = old.digest if old else "none"
    return hashlib.sha256(f"{prev}>{new.digest}#{new.runs}".encode()).hexdigest()[:32]
