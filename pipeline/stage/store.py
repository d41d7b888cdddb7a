"""Content-addressed staging: each distinct input file content is parsed once into
``<local>/staging/v3/<kind>/<sha256>.parquet`` (good rows and quarantined rows together).

That folder is the content ledger: an unchanged input costs a hash, never a parse. It stays on
local disk even when the tables live on object storage; another host simply stages again.
"""

from __future__ import annotations

import shutil
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


class ReadersFailed(RuntimeError):
    """The reader failed on some files for reasons that are not verdicts on them (memory, I/O:
    `driver.READER_FAILURES`). Every other file was staged; nothing was staged for these, so the next
    run reads them again. The run stops before it commits: a warehouse without them would drop their facts."""

    def __init__(self, failures: list[tuple[SourceFile, driver.ReaderFailure]]):
        self.failures = failures
        listed = "; ".join(f"{s.source_path}: {f.why}" for s, f in failures[:5]) + ("; …" if len(failures) > 5 else "")
        super().__init__(
            f"could not read {len(failures)} input file(s), for a reason that is not a verdict on them: "
            f"{listed}. Nothing was committed and nothing was recorded for them: the next run reads them "
            "again (with more memory, LIGER_READER_MEMORY, or once the I/O error is gone)"
        )


CHANGED_RETRIES = 3
STALE_S = 3600  # write-aside files older than this belong to a killed run, never to a live one


# A file this small is staged in one query with others of its parse context (a query's fixed cost is
# most of a small file's staging: upstream's CSV snapshots are 0.5 MB); a query's files hold at most
# SEVERAL_MAX_BYTES, so a backfill's history makes several queries, side by side.
SEVERAL_MAX_FILE_BYTES = 4 << 20
SEVERAL_MAX_BYTES = 16 << 20


def _several_context(s: SourceFile) -> object:
    if s.size_bytes > SEVERAL_MAX_FILE_BYTES:
        return None
    try:
        return driver.several_context(READERS[s.kind], s.path)
    except OSError:  # gone or unreadable: its own staging says why
        return None


def _units(files: list[SourceFile]) -> list[tuple[object, list[SourceFile]]]:
    """The staging queries, largest first: (parse context, files). Small files of one context go
    together in path order (snapshots of one file sit together, and a query derives a line they share
    once), at most SEVERAL_MAX_BYTES a query; any other file alone (context None)."""
    if len(files) == 1:  # the one-file path guards and scans it itself: do not read it twice
        return [(None, files)]
    groups: dict[tuple, list[SourceFile]] = {}
    units: list[tuple[object, list[SourceFile]]] = []
    for s in files:
        context = _several_context(s)
        if context is None:
            units.append((None, [s]))
        else:
            groups.setdefault((s.kind, context), []).append(s)
    for (_, context), members in groups.items():
        members.sort(key=lambda s: s.source_path)
        total = sum(s.size_bytes for s in members)
        share = total / max(1, -(-total // SEVERAL_MAX_BYTES))  # equal parts, none over the bound
        chunk: list[SourceFile] = []
        size = 0
        for s in members:
            if chunk and size + s.size_bytes > share * 1.01:
                units.append((context, chunk))
                chunk, size = [], 0
            chunk.append(s)
            size += s.size_bytes
        units.append((context, chunk))
    return sorted(units, key=lambda u: -sum(s.size_bytes for s in u[1]))


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
        if not todo:
            return {"sources": len(sources), "newly_staged": 0, "already_staged": len(sources), "new": set()}
        # One database for the whole batch (each query on its own cursor): a new database per file
        # costs more than parsing a small file. Each query streams on one thread (its row numbers
        # follow file order), so queries run side by side.
        db = duck.connect(temp_dir=self.root / ".duckdb_tmp", memory_limit=reader_memory())
        try:
            try:
                for reader in READERS.values():
                    reader.register(db)
            except driver.READER_FAILURES as exc:  # the batch's setup: no file was read, none judged
                raise ReadersFailed([(s, driver.ReaderFailure(s.path, exc)) for s in todo.values()]) from exc
            with ThreadPoolExecutor(max_workers=max_workers) as pool:
                failed = [
                    f for unit in pool.map(lambda u: self._stage_unit(u, db), _units(list(todo.values()))) for f in unit
                ]
        finally:
            db.close()
        if failed:
            raise ReadersFailed(failed)
        return {
            "sources": len(sources),
            "newly_staged": len(todo),
            "already_staged": len(sources) - len(todo),
            "new": set(todo),
        }

    def _stage_unit(
        self, unit: tuple[object, list[SourceFile]], db: duckdb.DuckDBPyConnection
    ) -> list[tuple[SourceFile, driver.ReaderFailure]]:
        """Stage one unit; returns the files the reader failed on (staged: none of them)."""
        context, files = unit
        if context is not None and len(files) > 1:  # one file reads faster by the one-file query
            failpoints.pause("staging")
            reader = READERS[files[0].kind]
            alone = {
                path for path, _ in driver.stage_several(reader, [(s.path, self.path(s)) for s in files], context, db)
            }
            files = [s for s in files if s.path in alone or self._changed_since_hashed(s)]
        failed = []
        for s in files:
            try:
                self._stage_alone(s, db)
            except driver.ReaderFailure as failure:
                failed.append((s, failure))
        return failed

    def _stage_alone(self, s: SourceFile, db: duckdb.DuckDBPyConnection) -> None:
        for _ in range(CHANGED_RETRIES):
            failpoints.pause("staging")
            driver.stage_or_quarantine(READERS[s.kind], s.path, self.path(s), db)
            if not self._changed_since_hashed(s):
                return
        raise ChangedWhileRead(f"{s.source_path} kept changing while it was staged; nothing of it was kept")

    def _changed_since_hashed(self, s: SourceFile) -> bool:
        """The bytes parsed must be the bytes hashed: a file that changed while it was read (appended
        to, rewritten) would leave rows under the old digest. Its staging is dropped and the file
        hashed again as it is now, to be parsed again."""
        key = stat_key(s.path)
        if key == self.stat_keys[id(s)]:
            return False
        self.path(s).unlink(missing_ok=True)
        s.content_sha256, self.stat_keys[id(s)] = file_sha256(s.path), key
        return True

    def collect_garbage(self) -> int:
        """Remove write-aside files of staging runs that were killed, once clearly stale
        (staging runs outside the run lock, so a fresh one may belong to a live run)."""
        stale_before, removed = time.time() - STALE_S, 0
        for pattern in (".*.tmp", ".*.src", ".*.eol"):
            for leftover in self.root.glob(f"*/{pattern}"):
                try:
                    if leftover.stat().st_mtime < stale_before:
                        if leftover.is_dir():  # the partitions of several files staged in one query
                            shutil.rmtree(leftover)
                        else:
                            leftover.unlink(missing_ok=True)
                        removed += 1
                except OSError:
                    continue
        return removed
