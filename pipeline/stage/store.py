"""Content-addressed staging: each distinct input file content is parsed once into
``<local>/staging/v1/<kind>/<sha256>.parquet`` (good rows and quarantined rows together).

That folder is the content ledger: an unchanged input costs a hash, never a parse. It stays on
local disk even when the tables live on object storage; another host simply stages again.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from pipeline.common import duck, failpoints
from pipeline.config import load, reader_memory
from pipeline.contracts.sources import CSV_KIND, KERNELINDEX_KIND, SourceFile, file_sha256
from pipeline.stage import csv_reader, driver, kernelindex_reader
from pipeline.stage.hash_index import HashIndex, stat_key

READERS = {CSV_KIND: csv_reader.READER, KERNELINDEX_KIND: kernelindex_reader.READER}


class ChangedWhileRead(RuntimeError):
    """An input changed between hashing and parsing; nothing of it was kept."""


CHANGED_RETRIES = 3
STALE_S = 3600  # write-aside files older than this belong to a killed run, never to a live one


class StagingStore:
    def __init__(self, root: Path):
        self.root = root

    def path(self, src: SourceFile) -> Path:
        return self.root / src.kind / f"{src.content_sha256}.parquet"

    def empty_templates(self) -> dict[str, Path]:
        """Zero-row staged files that give read_parquet a schema when no input of a kind exists."""
        out = {}
        for kind, reader in READERS.items():
            dest = self.root / f"_empty_{kind}.parquet"
            if not dest.exists():
                driver.write_rows_only(dest, reader.schema, [])
            out[kind] = dest
        return out

    def hash_sources(self, sources: list[SourceFile], max_workers: int = 2) -> None:
        """Set each source's sha256: from the stat index when its size, mtime and inode are
        unchanged, else by reading it (in threads: hashlib releases the GIL)."""
        index = HashIndex(self.root / "hash_index.json", trust=not load().rehash)
        keys = {id(s): stat_key(s.path) for s in sources}
        unknown = []
        for s in sources:
            sha = index.lookup(s.path, keys[id(s)])
            if sha is None:
                unknown.append(s)
            else:
                s.content_sha256 = sha
        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            for s, sha in zip(unknown, pool.map(lambda s: file_sha256(s.path), unknown), strict=True):
                s.content_sha256 = sha
                index.remember(s.path, keys[id(s)], sha)
        index.save({str(s.path) for s in sources})
        self.stat_keys = keys

    def stage(self, sources: list[SourceFile], max_workers: int = 2) -> dict:
        """Hash every source, parse only contents never staged before. Returns counts, and in
        ``new`` the (sha256 + kind) of each content this call parsed."""
        self.hash_sources(sources, max_workers)
        todo: dict[str, SourceFile] = {}
        for s in sources:
            if not self.path(s).exists():
                todo.setdefault(s.content_sha256 + s.kind, s)

        def run(s: SourceFile, db: duckdb.DuckDBPyConnection) -> None:
            # The bytes parsed must be the bytes hashed: a file that changed while it was read
            # (appended to, rewritten) would leave rows under the old digest. Its staging is
            # dropped and the file hashed and parsed again as it is now.
            for _ in range(CHANGED_RETRIES):
                failpoints.pause("staging")
                driver.stage_or_quarantine(READERS[s.kind], s.path, self.path(s), db)
                key = stat_key(s.path)
                if key == self.stat_keys[id(s)]:
                    return
                self.path(s).unlink(missing_ok=True)
                s.content_sha256, self.stat_keys[id(s)] = file_sha256(s.path), key
            raise ChangedWhileRead(f"{s.source_path} kept changing while it was staged; nothing of it was kept")

        if not todo:
            return {"sources": len(sources), "newly_staged": 0, "already_staged": len(sources), "new": set()}
        # One database for the whole batch (each file on its own cursor): a new database per file
        # costs more than parsing a small file. Each file's query streams on one thread (its row
        # numbers follow file order), so files run side by side.
        db = duck.connect(temp_dir=self.root / ".duckdb_tmp", memory_limit=reader_memory())
        try:
            for reader in READERS.values():
                reader.register(db)
            with ThreadPoolExecutor(max_workers=max_workers) as pool:
                # largest first, so one big file does not run alone at the end
                list(pool.map(lambda s: run(s, db), sorted(todo.values(), key=lambda s: -s.size_bytes)))
        finally:
            db.close()
        return {
            "sources": len(sources),
            "newly_staged": len(todo),
            "already_staged": len(sources) - len(todo),
            "new": set(todo),
        }

    def collect_garbage(self) -> int:
        """Remove write-aside files of staging runs that were killed, once clearly stale
        (staging runs outside the run lock, so a fresh one may belong to a live run)."""
        stale_before, removed = time.time() - STALE_S, 0
        for pattern in (".*.tmp", ".*.src"):
            for leftover in self.root.glob(f"*/{pattern}"):
                try:
                    if leftover.stat().st_mtime < stale_before:
                        leftover.unlink(missing_ok=True)
                        removed += 1
                except OSError:
                    continue
        return removed
