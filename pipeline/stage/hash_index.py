"""git's index, for staging: an input whose size, mtime and inode are what they were when it was
last hashed keeps its sha256, so a run with nothing new reads no input byte.

Racy entries are handled as git does: an entry whose file changed within `RACY_NS` of the moment
the index was written could have changed again unseen in the same mtime tick, so it is hashed
again. `LIGER_REHASH=1` (config `rehash`) ignores the index and hashes everything.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pipeline.common.files import atomic_path, publish

RACY_NS = 2_000_000_000  # coarser than any file system's mtime granularity we run on


def stat_key(path: Path) -> list[int]:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class HashIndex:
    def __init__(self, file: Path, *, trust: bool = True):
        self.file = file
        self.entries: dict[str, list] = {}
        self.saved_ns = 0
        if trust:
            try:
                data = json.loads(file.read_text())
                self.entries, self.saved_ns = data["entries"], int(data["saved_ns"])
            except (OSError, ValueError, KeyError, TypeError):
                pass

    def lookup(self, path: Path, key: list[int]) -> str | None:
        entry = self.entries.get(str(path))
        if entry and entry[:3] == key and key[1] + RACY_NS < self.saved_ns:
            return entry[3]
        return None

    def remember(self, path: Path, key: list[int], sha256: str) -> None:
        self.entries[str(path)] = [*key, sha256]

    def save(self, keep: set[str]) -> None:
        """Write the entries of the paths still in use, atomically."""
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = atomic_path(self.file)
        entries = {p: e for p, e in self.entries.items() if p in keep}
        tmp.write_text(json.dumps({"saved_ns": time.time_ns(), "entries": entries}))
        publish(tmp, self.file)
