"""Warehouse layout, content-addressed staging, atomic publication and the DuckDB file.

    warehouse/
      staging/v1/{liger_csv,kernelindex}/<sha256>.parquet   one per distinct input file content
      generations/<id>/*.parquet                             one complete set of tables per build
      current -> generations/<id>                             swapped atomically (symlink rename)
      liger.duckdb                                            views over one generation; replaced atomically
      .lock                                                   serializes publication
      generations/.<id>.tmp(.lock)                            a generation being built (locked while alive)

Readers never see a half-written table: every file is written aside and renamed, a generation
is complete before `current` points at it, and the DuckDB file names one generation by path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import duckdb
from filelock import FileLock, Timeout

from . import csv_reader, kernelindex_reader
from .normalize import BuildSummary, build_tables
from .reasons import Reason
from .settings import BUILD_MEMORY, SQL_DIR
from .sources import CSV_KIND, SourceFile, file_sha256

STAGING_VERSION = "v1"
TABLES = ("fact_measurement", "dim_environment", "dim_protocol", "dim_workload", "dim_implementation", "source", "quarantine")
KEEP_GENERATIONS = 3
STALE_STAGING_S = 3600
# A run that finds another one publishing waits this long, then fails with WarehouseBusy.
LOCK_TIMEOUT_S = float(os.environ.get("LIGER_LOCK_TIMEOUT_S", "600"))


class WarehouseBusy(Timeout):
    """Raised when the publication lock cannot be taken: says what happened and that nothing changed."""

    def __init__(self, lock_file: str, waited: float):
        super().__init__(lock_file)
        self.waited = waited

    def __str__(self) -> str:
        return (f"another run holds the warehouse lock {self.lock_file} (waited {self.waited:.0f} s); "
                "this run published nothing and the warehouse is unchanged; retry when that run has finished")


class WarehouseLock(FileLock):
    def acquire(self, timeout=None, *args, **kwargs):  # type: ignore[override]
        try:
            return super().acquire(timeout, *args, **kwargs)
        except Timeout as exc:
            raise WarehouseBusy(self.lock_file, self.timeout if timeout is None else timeout) from exc


class Warehouse:
    def __init__(self, root: Path):
        self.root = root.resolve()

    # -- paths ---------------------------------------------------------------------------
    @property
    def staging(self) -> Path:
        return self.root / "staging" / STAGING_VERSION

    @property
    def generations(self) -> Path:
        return self.root / "generations"

    @property
    def current(self) -> Path:
        return self.root / "current"

    @property
    def duckdb_path(self) -> Path:
        return self.root / "liger.duckdb"

    @property
    def temp_dir(self) -> Path:
        return self.root / "tmp"

    def lock(self, timeout: float | None = None) -> FileLock:
        """Serializes publication: the `current` swap, the DuckDB build + swap, garbage collection."""
        self.root.mkdir(parents=True, exist_ok=True)
        return WarehouseLock(str(self.root / ".lock"), timeout=LOCK_TIMEOUT_S if timeout is None else timeout)

    def staged_path(self, src: SourceFile) -> Path:
        return self.staging / src.kind / f"{src.content_sha256}.parquet"

    def current_generation(self) -> Path | None:
        return self.current.resolve() if self.current.is_symlink() else None

    # -- staging ---------------------------------------------------------------------------
    def empty_templates(self) -> dict[str, Path]:
        """Zero-row staged files that give read_parquet a schema even when no input of a kind exists."""
        out = {}
        for kind, stage, suffix in ((CSV_KIND, csv_reader.stage_csv_file, ".csv"),
                                    ("kernelindex", kernelindex_reader.stage_kernelindex_file, ".ndjson")):
            dest = self.staging / f"_empty_{kind}.parquet"
            if not dest.exists():
                self.temp_dir.mkdir(parents=True, exist_ok=True)
                blank = self.temp_dir / f"empty-{uuid.uuid4().hex}{suffix}"
                blank.write_text("" if kind == CSV_KIND else "\n")
                try:
                    if kind == CSV_KIND:
                        csv_reader.write_quarantine_only_stage(dest, [])
                    else:
                        stage(blank, dest)
                finally:
                    blank.unlink(missing_ok=True)
            out[kind] = dest
        return out

    def stage(self, sources: list[SourceFile], max_workers: int = 2,
              progress: Callable[[str], None] | None = None) -> dict[str, int]:
        """Hash every source, parse only contents never staged before. Returns counts."""
        for s in sources:
            s.content_sha256 = file_sha256(s.path)
        todo: dict[str, SourceFile] = {}
        for s in sources:
            if not self.staged_path(s).exists():
                todo.setdefault(s.content_sha256 + s.kind, s)

        def run(s: SourceFile) -> None:
            try:
                if s.kind == CSV_KIND:
                    csv_reader.stage_csv_file(s.path, self.staged_path(s))
                else:
                    kernelindex_reader.stage_kernelindex_file(s.path, self.staged_path(s))
            except (OSError, duckdb.Error) as exc:  # the file is bad, not the run
                csv_reader.write_quarantine_only_stage(self.staged_path(s), [("file", Reason.UNREADABLE_FILE, f"{type(exc).__name__}: {exc}")])
            if progress:
                progress(s.source_path)

        with ThreadPoolExecutor(max_workers=max_workers) as pool:
            # largest first, so one big file does not run alone at the end
            list(pool.map(run, sorted(todo.values(), key=lambda s: -s.size_bytes)))
        return {"sources": len(sources), "newly_staged": len(todo), "already_staged": len(sources) - len(todo)}

    # -- build + publish ------------------------------------------------------------------
    def build_generation(self, sources: list[SourceFile], problems: list[tuple[str, str, str]]) -> tuple[Path, BuildSummary]:
        gen = self.generations / f"{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"
        tmp = gen.with_name(f".{gen.name}.tmp")
        # Held while the generation is built, so a concurrent run's garbage collection leaves it alone
        # (a killed build's lock dies with its process, and the leftover is then collected).
        building = FileLock(str(tmp) + ".lock", timeout=0)
        spill = self.temp_dir / f"build-{gen.name}"  # DuckDB spill files: one directory per build
        spill.mkdir(parents=True, exist_ok=True)
        staged = {s.source_path: self.staged_path(s) for s in sources}
        try:
            with building:
                summary = build_tables(sources, staged, self.empty_templates(), problems, tmp, temp_dir=spill)
                (tmp / "summary.json").write_text(json.dumps(summary.__dict__, indent=2, sort_keys=True))
                os.replace(tmp, gen)
        finally:
            shutil.rmtree(spill, ignore_errors=True)
            Path(building.lock_file).unlink(missing_ok=True)
        return gen, summary

    def publish(self, gen: Path) -> None:
        link = self.root / f".current.{uuid.uuid4().hex}"
        os.symlink(os.path.relpath(gen, self.root), link)
        os.replace(link, self.current)

    def build_duckdb(self, gen: Path, before_views: Iterable[Callable[[duckdb.DuckDBPyConnection], None]] = (),
                     after_views: Iterable[Callable[[duckdb.DuckDBPyConnection], None]] = ()) -> list[str]:
        """Create views over ``gen``'s Parquet, run sql/views/*.sql in order, swap the file in."""
        tmp = self.root / f".liger.duckdb.{uuid.uuid4().hex}.tmp"
        self.temp_dir.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(tmp), config={"temp_directory": str(self.temp_dir), "memory_limit": BUILD_MEMORY})
        try:
            con.execute("set enable_progress_bar = false")
            for table in TABLES:
                path = str((gen / f"{table}.parquet").resolve()).replace("'", "''")
                con.execute(f"create or replace view {table} as select * from read_parquet('{path}')")
            for hook in before_views:
                hook(con)
            applied = []
            for sql_file in sorted((SQL_DIR / "views").glob("*.sql")):
                text = sql_file.read_text()
                con.execute(text)
                if MATERIALIZE_MARKER in text.lower():
                    _materialize(con, text)
                applied.append(sql_file.name)
            for hook in after_views:
                hook(con)
            con.execute("checkpoint")
        finally:
            con.close()
        os.replace(tmp, self.duckdb_path)
        return applied

    def collect_garbage(self) -> list[str]:
        """Drop old generations; the newest few stay so open read-only sessions keep working."""
        if not self.generations.is_dir():
            return []
        current = self.current_generation()
        gens = sorted(p for p in self.generations.iterdir() if p.is_dir() and not p.name.startswith("."))
        keep = set(gens[-KEEP_GENERATIONS:]) | ({current} if current else set())
        removed = []
        for g in gens:
            if g not in keep:
                shutil.rmtree(g, ignore_errors=True)
                removed.append(g.name)
        for leftover in self.root.glob(".liger.duckdb.*.tmp"):
            leftover.unlink(missing_ok=True)
        for leftover in self.generations.glob(".*.tmp"):
            try:  # only builds whose process is gone: a live build holds its lock
                with FileLock(str(leftover) + ".lock", timeout=0):
                    shutil.rmtree(leftover, ignore_errors=True)
                Path(str(leftover) + ".lock").unlink(missing_ok=True)
            except Timeout:
                continue
        # Write-aside files of staging runs that were killed: never read, removed once clearly stale
        # (staging is not under the publication lock, so a fresh one may belong to a live run).
        stale_before = time.time() - STALE_STAGING_S
        for pattern in (".*.tmp", ".*.src"):
            for leftover in self.staging.glob(f"*/{pattern}"):
                try:
                    if leftover.stat().st_mtime < stale_before:
                        leftover.unlink(missing_ok=True)
                except OSError:
                    continue
        return removed


MATERIALIZE_MARKER = "-- materialize: table"
_VIEW_NAME = re.compile(r"create\s+or\s+replace\s+view\s+([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE)


def _materialize(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """A generation never changes, so an expensive view is computed once at build time and kept as a
    table; the view keeps its name and now reads the table (warm queries stay well under a second)."""
    match = _VIEW_NAME.search(text)
    if match is None:
        raise ValueError("a '-- materialize: table' file must define a view with 'create or replace view <name>'")
    name = match.group(1)
    con.execute(f'create or replace table "{name}__materialized" as select * from "{name}"')
    con.execute(f'create or replace view "{name}" as select * from "{name}__materialized"')
