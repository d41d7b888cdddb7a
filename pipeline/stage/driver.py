"""One input file -> one staged Parquet file, the same steps for every reader:

guards   the reader's verdict on the whole file (refused, empty, or to parse) and the pre-scan that
         cuts out lines no parser may see (too long, too many fields);
parse    the reader's one streaming query over the file, written aside;
rejects  the lines the parser refused or the pre-scan cut out, and the reader's file-level rejects,
         joined to the rows in a second write only when there are any (rare);
publish  flush and rename onto the content-addressed name.

Small files of one parse context (a CSV header) may be staged together, in one query whose output is
split by file (`stage_several`); a file that query cannot stage whole takes the one-file path.

A file refused whole, or whose parse fails, is one quarantine row: the driver writes it for every
kind, with that reader's columns. The readers (csv_reader, kernelindex_reader) give the steps; they
never import each other.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.common import duck
from pipeline.common.files import atomic_path, publish
from pipeline.config import reader_memory
from pipeline.contracts.reasons import Reason
from pipeline.stage import line_endings
from pipeline.stage.oversize import RAW_PREVIEW_CHARS, Oversize, line_numbers, scan_oversize_lines, write_without

Reject = tuple[str, str, str]  # (location, reason, raw text)

# Failures of the reader, not verdicts on the file: memory, I/O (the bytes were just hashed, so they
# could be read), an interrupt. A staged file is named by its bytes and kept for good, so none records
# them: `stage_or_quarantine` raises ReaderFailure and the next run reads the file again.
READER_FAILURES = (
    MemoryError,
    OSError,
    duckdb.OutOfMemoryException,
    duckdb.IOException,
    duckdb.InterruptException,
)


class ReaderFailure(RuntimeError):
    """Reading one file failed for a reason that is not a verdict on its bytes (READER_FAILURES)."""

    def __init__(self, path: Path, cause: BaseException):
        self.path, self.cause = path, cause
        self.why = f"{type(cause).__name__}: {(str(cause).strip().splitlines() or [''])[0]}"
        super().__init__(f"{path}: {self.why}")


@dataclass(frozen=True)
class Scan:
    """The pre-scan of a line format: which lines never reach the parser."""

    max_line_bytes: int
    max_fields: int | None  # None: fields are not counted
    too_long: str
    too_wide: str
    skip_first_line: bool = False  # the header, judged by the reader's guard

    def oversize(self, path: Path) -> list[Oversize]:
        found = scan_oversize_lines(path, self.max_line_bytes, self.max_fields, self.too_long, self.too_wide)
        return [o for o in found if o.line_no > 1] if self.skip_first_line else found


@dataclass
class Guard:
    """A reader's verdict on a whole file, before any parse."""

    refused: tuple[str, str] | None = None  # (reason, raw): the file is one quarantine row
    empty: bool = False  # nothing to parse (not an error): a staged file without rows
    rejects: list[Reject] = field(default_factory=list)  # file-level rejects staged beside the rows
    scan: Scan | None = None  # the pre-scan, for a format with lines
    context: Any = None  # what the reader's parse needs (the CSV header, a .json file's bundles)


@dataclass
class Job:
    """One file being parsed: what the reader's parse and rejects steps work on."""

    con: duckdb.DuckDBPyConnection
    path: Path  # the file the parser reads (a copy without the oversize lines, when there are any)
    dest: Path
    guard: Guard
    oversize: list[Oversize]
    tmp: Path  # the write-aside staged file; a step that rewrites it names the new one here


@dataclass(frozen=True)
class Reader:
    schema: pa.Schema  # a staged file's columns
    register: Callable[[duckdb.DuckDBPyConnection], None]  # the Python functions its query calls
    guard: Callable[[Path], Guard]
    parse: Callable[[Job], None]  # one streaming query: job.path -> job.tmp
    rejects: Callable[[Job], list[Reject]]  # the rejected lines, in line order
    # Several files of one parse context in one query (`stage_several`): (connection, paths, context,
    # folder) -> the paths with lines the parser refused; None for a reader that stages each file alone.
    parse_several: Callable[[duckdb.DuckDBPyConnection, list[Path], Any, Path], set[str]] | None = None


def stage(reader: Reader, path: Path, dest: Path, *, db: duckdb.DuckDBPyConnection | None = None) -> None:
    """Parse ``path`` and write the staged Parquet ``dest`` atomically (on a cursor of ``db``, whose
    functions the reader's ``register`` registered, or on a database of its own)."""
    guard = reader.guard(path)
    if guard.refused is not None:
        write_rows_only(dest, reader.schema, [("file", *guard.refused)])
        return
    if guard.empty:
        write_rows_only(dest, reader.schema, [])
        return
    try:
        _stage_lines(reader, path, dest, guard, db)
    except duckdb.InvalidInputException:
        # DuckDB's strict reader refuses a file whose line endings mix: read it from a copy in LF
        # (line_endings.py); any other refusal stands
        if guard.scan is None or not line_endings.mixed(path):
            raise
        normalized = atomic_path(dest).with_suffix(".eol")
        try:
            line_endings.write_normalized(path, normalized)
            _stage_lines(reader, normalized, dest, guard, db)
        finally:
            normalized.unlink(missing_ok=True)


def _stage_lines(reader: Reader, path: Path, dest: Path, guard: Guard, db: duckdb.DuckDBPyConnection | None) -> None:
    # Lines too long or too wide never reach DuckDB: beyond ~100 MB its reject store loses them, and
    # each extra field of a wide row costs it one reject entry (10^5 fields: minutes and gigabytes).
    oversize = guard.scan.oversize(path) if guard.scan is not None else []
    if not oversize:
        _parse_and_publish(reader, path, dest, guard, [], db)
        return
    clean = atomic_path(dest).with_suffix(".src")
    try:
        write_without(path, oversize, clean)
        _parse_and_publish(reader, clean, dest, guard, oversize, db)
    finally:
        clean.unlink(missing_ok=True)


def several_context(reader: Reader, path: Path) -> Any:
    """The parse context ``path`` would be staged with beside other files (`stage_several`), or None
    when it must be staged alone: its reader parses one file a query, or the file is refused, empty,
    or has file-level rejects or lines the pre-scan cuts out."""
    if reader.parse_several is None:
        return None
    guard = reader.guard(path)
    if guard.refused is not None or guard.empty or guard.rejects or guard.context is None:
        return None
    if guard.scan is not None and guard.scan.oversize(path):
        return None
    return guard.context


def stage_several(reader: Reader, files: list[tuple[Path, Path]], context: Any, db: duckdb.DuckDBPyConnection) -> list:
    """Stage ``files`` ((path, dest) pairs, one parse context) in one query on a cursor of ``db``: a
    query's fixed cost (binding, planning, the writer) is most of a small file's staging. Returns the
    pairs to stage one by one instead (`stage_or_quarantine`): a file with lines the parser refused
    (their reasons are the one-file path's), and every file when the query fails (the failure must be
    a file's own)."""
    folder = atomic_path(files[0][1])  # one folder of partitions, beside the staged files
    con = reader_connection(files[0][1], db, reader.register)
    try:
        rejected = reader.parse_several(con, [path for path, _ in files], context, folder)
    except duckdb.Error:
        shutil.rmtree(folder, ignore_errors=True)
        return files
    finally:
        con.close()
    alone = []
    for index, (path, dest) in enumerate(files, start=1):
        parts = sorted((folder / f"file_index={index}").glob("*.parquet"))
        if str(path) in rejected or len(parts) > 1:
            alone.append((path, dest))
        elif parts:
            publish(parts[0], dest)
        else:  # a header without rows
            write_rows_only(dest, reader.schema, [])
    shutil.rmtree(folder, ignore_errors=True)
    return alone


def stage_or_quarantine(reader: Reader, path: Path, dest: Path, db: duckdb.DuckDBPyConnection) -> None:
    """:func:`stage` on a cursor of ``db``; a file whose parse fails is staged as one quarantine row,
    unless the reader failed (READER_FAILURES): then nothing is staged and ReaderFailure is raised."""
    try:
        try:
            stage(reader, path, dest, db=db)
        except duckdb.Error:  # once more on a database of its own: the failure must be the file's
            stage(reader, path, dest)
    except READER_FAILURES as exc:
        raise ReaderFailure(path, exc) from exc
    except duckdb.Error as exc:  # the file is bad, not the run
        write_rows_only(dest, reader.schema, [("file", Reason.UNREADABLE_FILE, f"{type(exc).__name__}: {exc}")])


def _parse_and_publish(
    reader: Reader,
    path: Path,
    dest: Path,
    guard: Guard,
    oversize: list[Oversize],
    db: duckdb.DuckDBPyConnection | None,
) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    con = reader_connection(dest, db, reader.register)
    job = Job(con, path, dest, guard, oversize, atomic_path(dest))
    try:
        reader.parse(job)
        rejects = guard.rejects + reader.rejects(job)
        if rejects:  # rare: rejected lines are known only once the scan is done, so they join in a second write
            job.tmp = append_rejects(con, job.tmp, dest, rejects)
        publish(job.tmp, dest)
    except BaseException:  # no write-aside file outlives a failed parse
        job.tmp.unlink(missing_ok=True)
        raise
    finally:
        con.close()


def reader_connection(
    dest: Path, db: duckdb.DuckDBPyConnection | None, register: Callable[[duckdb.DuckDBPyConnection], None]
) -> duckdb.DuckDBPyConnection:
    """The connection one file is staged on: a cursor on the caller's database, whose functions are
    registered once for all files (a new database costs more than a small file's parse), or else a
    database of its own that spills next to the output."""
    if db is not None:
        con = db.cursor()
        con.execute("SET TimeZone = 'UTC'")
        return con
    con = duck.connect(temp_dir=dest.parent / ".duckdb_tmp", memory_limit=reader_memory())
    register(con)
    return con


def parser_rejects(
    job: Job, table: str, reasons: dict[str, Reason], default: Reason, *, strip_newlines: bool
) -> tuple[list[Reject], set[int]]:
    """The lines DuckDB's reader refused (``table``, its reject store: one entry per bad field, one
    kept per line, the first error on it) and the lines the pre-scan cut out, in line order; and
    the physical numbers of all those lines. DuckDB's own line counter skips blank lines, so a
    line's number comes from its byte offset."""
    raw_text = "coalesce(arg_min(csv_line, byte_position), '')"
    if strip_newlines:
        raw_text = f"ltrim({raw_text}, chr(10) || chr(13))"
    found = job.con.execute(
        f"""
        select line_byte_position, arg_min(error_type, byte_position), left({raw_text}, $cap)
        from {table} group by line_byte_position order by line_byte_position
        """,
        {"cap": RAW_PREVIEW_CHARS},
    ).fetchall()
    numbers = line_numbers(job.path, [r[0] for r in found])
    marked = {o.line_no for o in job.oversize}
    rejects = [
        (numbers[pos], str(reasons.get(err, default)), raw) for pos, err, raw in found if numbers[pos] not in marked
    ]
    rejects += [(o.line_no, str(o.reason), o.preview) for o in job.oversize]
    rejects.sort(key=lambda r: r[0])
    return [(f"line {n}", reason, raw) for n, reason, raw in rejects], set(numbers.values()) | marked


def append_rejects(con: duckdb.DuckDBPyConnection, staged: Path, dest: Path, rejects: list[Reject]) -> Path:
    """A new write-aside file: the rows of ``staged`` plus one row per rejected line (``staged`` is removed)."""
    con.register(
        "reject_rows",
        pa.table(
            {
                "location": [r[0] for r in rejects],
                "reason": [str(r[1]) for r in rejects],
                "raw": [r[2] for r in rejects],
            },
            schema=pa.schema([("location", pa.string()), ("reason", pa.string()), ("raw", pa.string())]),
        ),
    )
    out = atomic_path(dest)
    duck.write_parquet(
        con,
        """
        select * from read_parquet($staged)
        union all by name
        select null::bigint as record_no, location, reason, raw from reject_rows
        """,
        {"staged": str(staged)},
        out,
    )
    con.unregister("reject_rows")
    staged.unlink()
    return out


def write_rows_only(dest: Path, schema: pa.Schema, quarantine: list[Reject]) -> None:
    """A staged file with no good rows (an empty input, or a whole file refused with its reason), with
    the reader's columns: record_no numbers the rows, location/reason/raw hold them, the rest is null."""
    n = len(quarantine)
    given = {
        "record_no": pa.array(range(1, n + 1), pa.int64()),
        "location": pa.array([q[0] for q in quarantine], pa.string()),
        "reason": pa.array([str(q[1]) for q in quarantine], pa.string()),
        "raw": pa.array([q[2][:RAW_PREVIEW_CHARS] for q in quarantine], pa.string()),
    }
    cols = [given.get(f.name, pa.nulls(n, f.type)) for f in schema]
    tmp = atomic_path(dest)
    pq.write_table(pa.Table.from_arrays(cols, schema=schema), tmp)
    publish(tmp, dest)
