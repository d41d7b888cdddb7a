"""Content-addressed staging: each distinct input file content is parsed once into
``<local>/staging/v1/<kind>/<sha256>.parquet`` (good rows and quarantined rows together).

That folder is the content ledger: an unchanged input costs a hash, never a parse. It stays on
local disk even when the tables live on object storage; another host simply stages again.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from pipeline.common import duck, failpoints
from pipeline.config import reader_memory
from pipeline.contracts.reasons import Reason
from pipeline.contracts.sources import CSV_KIND, KERNELINDEX_KIND, SourceFile, file_sha256
from pipeline.stage import csv_reader, kernelindex_reader

STALE_S = 3600  # write-aside files older than this belong to a killed run, never to a live one


class StagingStore:
    def __init__(self, root: Path):
        self.root = root

    def path(self, src: SourceFile) -> Path:
        return self.root / src.kind / f"{src.content_sha256}.parquet"

    def empty_templates(self) -> dict[str, Path]:
        """Zero-row staged files that give read_parquet a schema when no input of a kind exists."""
        out = {}
        for kind in (CSV_KIND, KERNELINDEX_KIND):
            dest = self.root / f"_empty_{kind}.parquet"
            if not dest.exists():
                if kind == CSV_KIND:
                    csv_reader.write_quarantine_only_stage(dest, [])
                else:  # staging a blank bundle file gives the reader's own schema
                    blank = self.root / f".empty-{uuid.uuid4().hex}.ndjson"
                    blank.parent.mkdir(parents=True, exist_ok=True)
                    blank.write_text("\n")
                    try:
                        kernelindex_reader.stage_kernelindex_file(blank, dest)
                    finally:
                        blank.unlink(missing_ok=True)
            out[kind] = dest
        return out

    def stage(self, sources: list[SourceFile], max_workers: int = 2) -> dict:
        """Hash every source, parse only contents never staged before. Returns counts, and in
        ``new`` the (sha256 + kind) of each content this call parsed."""
        with ThreadPoolExecutor(max_workers=max_workers) as pool:  # hashlib releases the GIL: files hash in parallel
            for s, sha in zip(sources, pool.map(lambda s: file_sha256(s.path), sources), strict=False):
                s.content_sha256 = sha
        todo: dict[str, SourceFile] = {}
        for s in sources:
            if not self.path(s).exists():
                todo.setdefault(s.content_sha256 + s.kind, s)

        def stage_one(s: SourceFile, db: duckdb.DuckDBPyConnection | None) -> None:
            if s.kind == CSV_KIND:
                csv_reader.stage_csv_file(s.path, self.path(s), db=db)
            else:
                kernelindex_reader.stage_kernelindex_file(s.path, self.path(s), db=db)

        def run(s: SourceFile, db: duckdb.DuckDBPyConnection) -> None:
            failpoints.pause("staging")
            try:
                try:
                    stage_one(s, db)
                except duckdb.Error:  # once more on a database of its own: the failure must be the file's
                    stage_one(s, None)
            except (OSError, duckdb.Error) as exc:  # the file is bad, not the run
                csv_reader.write_quarantine_only_stage(
                    self.path(s), [("file", Reason.UNREADABLE_FILE, f"{type(exc).__name__}: {exc}")]
                )

        if not todo:
            return {"sources": len(sources), "newly_staged": 0, "already_staged": len(sources), "new": set()}
        # One database for the whole batch (each file on its own cursor): a new database per file
        # costs more than parsing a small file. Each file's query streams on one thread (its row
        # numbers follow file order), so files run side by side.
        db = duck.connect(temp_dir=self.root / ".duckdb_tmp", memory_limit=reader_memory())
        try:
            csv_reader.register_functions(db)
            kernelindex_reader.register_functions(db)
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
