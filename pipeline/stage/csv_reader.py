"""Upstream Liger benchmark CSV -> one staged Parquet file (good rows and quarantined rows together).

DuckDB parses (by column name, streaming, multi-threaded) and its reject store gives the line
and raw text of structurally broken lines; value checks are one vectorized SQL pass. Python
only touches the header and each *distinct* config string.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.config import MAX_COLUMNS, MAX_LINE_BYTES
from pipeline.contracts.digests import canonical_json, measurement_digest_sql
from pipeline.contracts.reasons import DUCKDB_REJECT_REASON, Reason
from pipeline.stage.files import (
    RAW_PREVIEW_CHARS,
    atomic_path,
    line_numbers,
    map_distinct,
    publish,
    reader_connection,
    scan_oversize_lines,
    write_without,
)

REQUIRED_COLUMNS = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_value",
    "y_value_50",
    "y_value_20",
    "y_value_80",
    "extra_benchmark_config_str",
    "gpu_name",
    "timestamp",
    "liger_version",
)
OPTIONAL_COLUMNS = ("x_label",)
# Fields that must be non-empty in a row (x_label is descriptive only).
NON_EMPTY = tuple(c for c in REQUIRED_COLUMNS)
# Fields staged trimmed, as <name>__trimmed in the query (the suffix, like the __dup suffix of
# repeated header names, is the reader's own).
TRIMMED = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_value",
    "gpu_name",
    "liger_version",
)

STAGED_COLUMNS = (
    "record_no",
    "location",
    "reason",
    "raw",
    "measurement_digest",
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "metric_unit",
    "x_name",
    "x_label",
    "x_value",
    "extra_config",
    "gpu_name",
    "observed_at",
    "observed_at_text",
    "liger_version",
    "p20",
    "p50",
    "p80",
)


@dataclass(frozen=True)
class StageResult:
    rows_read: int
    rows_quarantined: int
    file_reason: str | None = None


def _read_header(path: Path) -> tuple[list[str] | None, tuple[Reason, str] | None]:
    """First line only, bounded: a 10^6-column or 1 GB header never reaches the CSV engine."""
    with path.open("rb") as fh:
        first = fh.readline(MAX_LINE_BYTES + 1)
    if not first.strip():
        return None, None  # empty file: nothing to read, not an error
    if len(first) > MAX_LINE_BYTES:
        return None, (Reason.LINE_TOO_LONG, first[:RAW_PREVIEW_CHARS].decode("utf-8", "replace"))
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None, (Reason.UNREADABLE_BYTES, first[:RAW_PREVIEW_CHARS].decode("utf-8", "replace"))
    if text.count(",") + 1 > MAX_COLUMNS:
        return None, (Reason.HEADER_TOO_WIDE, text[:RAW_PREVIEW_CHARS])
    header = [h.strip() for h in next(csv.reader(io.StringIO(text)))]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        return None, (Reason.MISSING_REQUIRED_COLUMN, f"missing {','.join(missing)} in header: {text.strip()}")
    return header, None


def _canonical_config(raw: str | None) -> str | None:
    try:
        value = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    try:
        return canonical_json(value)
    except (ValueError, RecursionError):  # NaN/Infinity are not JSON
        return None


def write_quarantine_only_stage(dest: Path, quarantine: list[tuple[str, str, str]]) -> None:
    """A staged file with no good rows: an empty input, or a whole file refused with its reason."""
    cols: dict[str, pa.Array] = {}
    n = len(quarantine)
    for c in STAGED_COLUMNS:
        if c == "record_no":
            cols[c] = pa.array(range(1, n + 1), pa.int64())
        elif c in ("p20", "p50", "p80"):
            cols[c] = pa.nulls(n, pa.float64())
        elif c == "observed_at":
            cols[c] = pa.nulls(n, pa.timestamp("us"))
        else:
            cols[c] = pa.nulls(n, pa.string())
    cols["location"] = pa.array([q[0] for q in quarantine], pa.string())
    cols["reason"] = pa.array([str(q[1]) for q in quarantine], pa.string())
    cols["raw"] = pa.array([q[2][:RAW_PREVIEW_CHARS] for q in quarantine], pa.string())
    tmp = atomic_path(dest)
    pq.write_table(pa.table(cols), tmp)
    publish(tmp, dest)


def stage_csv_file(
    path: Path, dest: Path, *, threads: int | None = None, db: duckdb.DuckDBPyConnection | None = None
) -> StageResult:
    """Parse ``path`` and write the staged Parquet ``dest`` atomically (on a cursor of ``db``, whose
    functions :func:`register_functions` registered, or on a database of its own)."""
    header, file_error = _read_header(path)
    if file_error is not None:
        write_quarantine_only_stage(dest, [("file", file_error[0], file_error[1])])
        return StageResult(0, 1, str(file_error[0]))
    if header is None:
        write_quarantine_only_stage(dest, [])
        return StageResult(0, 0)
    # Lines too long or too wide never reach DuckDB: beyond ~100 MB its reject store loses them, and
    # each extra field of a wide row costs it one reject entry (10^5 fields: minutes and gigabytes).
    oversize = [
        o
        for o in scan_oversize_lines(path, MAX_LINE_BYTES, MAX_COLUMNS, Reason.LINE_TOO_LONG, Reason.LONG_ROW)
        if o.line_no > 1
    ]
    if not oversize:
        return _stage_parsed(path, dest, header, [], threads, db)
    clean = atomic_path(dest).with_suffix(".src")
    try:
        write_without(path, oversize, clean)
        return _stage_parsed(clean, dest, header, oversize, threads, db)
    finally:
        clean.unlink(missing_ok=True)


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    """The Python function the CSV query calls: each distinct config canonicalized once (configs
    repeat on every row of a sweep), remembered across batches and files."""
    memo: dict[str, str | None] = {}
    con.create_function(
        "canonical_config",
        lambda raw: map_distinct(raw, _canonical_config, pa.string(), memo),
        ["VARCHAR"],
        "VARCHAR",
        type="arrow",
        null_handling="special",
    )


def _stage_parsed(
    path: Path, dest: Path, header: list[str], oversize: list, threads: int | None, db: duckdb.DuckDBPyConnection | None
) -> StageResult:
    # Deduplicate header names so DuckDB accepts them; we only read the known ones by name.
    seen: dict[str, int] = {}
    columns: dict[str, str] = {}
    for h in header:
        name = h if h not in seen else f"{h}__dup{seen[h]}"
        seen[h] = seen.get(h, 0) + 1
        columns[name] = "VARCHAR"

    dest.parent.mkdir(parents=True, exist_ok=True)
    con = reader_connection(dest, db, register_functions)
    try:
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        x_label = "x_label" if "x_label" in columns else "null::varchar"
        raw_expr = "concat_ws(',', " + ", ".join(f"coalesce({_q(c)}, '')" for c in header if c in columns) + ")"
        # a field staged trimmed is trimmed once (in `casted`), for both the empty check and the output
        empty = " or ".join(
            f"nullif({_q(c + '__trimmed') if c in TRIMMED else 'trim(' + _q(c) + ')'}, '') is null" for c in NON_EMPTY
        )
        digest = measurement_digest_sql()
        tmp = atomic_path(dest)
        # One streaming pass: parse, judge, hash and write. The empty OVER () keeps the file's row order
        # (DuckDB streams that window in order), so record_no is the record's ordinal in the file.
        # The relation API takes the output path as an argument: no path is ever pasted into SQL.
        con.sql(
            f"""
            with parsed as (
                select row_number() over () as record_no, *
                from read_csv($path, header = true, auto_detect = false, columns = $columns,
                              delim = ',', quote = '"', escape = '"', strict_mode = true,
                              max_line_size = $max_line, store_rejects = true,
                              rejects_table = 'csv_rejects', rejects_scan = 'csv_reject_scans')
            ),
            casted as (
                select *,
                    canonical_config(extra_benchmark_config_str) as config_canonical,
                    trim(kernel_name) as kernel_name__trimmed,
                    trim(kernel_provider) as kernel_provider__trimmed,
                    trim(kernel_operation_mode) as kernel_operation_mode__trimmed,
                    trim(metric_name) as metric_name__trimmed,
                    trim(metric_unit) as metric_unit__trimmed,
                    trim(x_name) as x_name__trimmed,
                    trim(x_value) as x_value__trimmed,
                    trim(gpu_name) as gpu_name__trimmed,
                    trim(liger_version) as liger_version__trimmed,
                    try_cast(y_value_20 as double) as v20,
                    try_cast(y_value_50 as double) as v50,
                    try_cast(y_value_80 as double) as v80,
                    -- upstream's own format first (fast path); anything else ISO-8601 with a zone goes through ICU
                    coalesce(try_strptime("timestamp", '%Y-%m-%d %H:%M:%S'),
                             try_cast(try_cast("timestamp" as timestamptz) as timestamp)) as ts
                from parsed
            ),
            judged as (
                select *,
                    case
                        when {empty} then '{Reason.EMPTY_FIELD}'
                        when v20 is null or v50 is null or v80 is null
                             or isnan(v20) or isnan(v50) or isnan(v80)
                             or isinf(v20) or isinf(v50) or isinf(v80) then '{Reason.NON_NUMERIC_VALUE}'
                        when v20 <= 0 or v50 <= 0 or v80 <= 0 then '{Reason.NON_POSITIVE_VALUE}'
                        when not (v20 <= v50 and v50 <= v80) then '{Reason.QUANTILE_ORDER}'
                        when ts is null then '{Reason.BAD_TIMESTAMP}'
                        when config_canonical is null then '{Reason.BAD_CONFIG_JSON}'
                    end as reason
                from casted
            ),
            typed as (
                select
                    record_no,
                    'record ' || record_no as location,
                    reason,
                    case when reason is not null then left({raw_expr}, {RAW_PREVIEW_CHARS}) end as raw,
                    kernel_name__trimmed as kernel_name,
                    kernel_provider__trimmed as kernel_provider,
                    kernel_operation_mode__trimmed as kernel_operation_mode,
                    metric_name__trimmed as metric_name,
                    metric_unit__trimmed as metric_unit,
                    x_name__trimmed as x_name,
                    {x_label} as x_label,
                    x_value__trimmed as x_value,
                    config_canonical as extra_config,
                    gpu_name__trimmed as gpu_name,
                    ts as observed_at,
                    strftime(ts, '%Y-%m-%d %H:%M:%S') as observed_at_text,
                    liger_version__trimmed as liger_version,
                    v20 as p20, v50 as p50, v80 as p80
                from judged
            )
            select record_no, location, reason, raw,
                   case when reason is null then {digest} end as measurement_digest,
                   kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
                   x_name, x_label, x_value, extra_config, gpu_name, observed_at, observed_at_text,
                   liger_version, p20, p50, p80
            from typed
            """,
            params={"path": str(path), "columns": columns, "max_line": MAX_LINE_BYTES},
        ).write_parquet(str(tmp), compression="zstd")
        # One reject entry per bad *field*: keep one per line (the first error on it). DuckDB's own
        # line counter skips blank lines, so the physical line number comes from the byte offset.
        raw_rejects = con.execute(
            """
            select line_byte_position, arg_min(error_type, byte_position),
                   left(ltrim(coalesce(arg_min(csv_line, byte_position), ''), chr(10) || chr(13)), $cap)
            from csv_rejects group by line_byte_position order by line_byte_position
            """,
            {"cap": RAW_PREVIEW_CHARS},
        ).fetchall()
        numbers = line_numbers(path, [r[0] for r in raw_rejects])
        marked = {o.line_no for o in oversize}
        rejects = [
            (f"line {numbers[pos]}", str(DUCKDB_REJECT_REASON.get(err, Reason.MALFORMED_CSV)), raw)
            for pos, err, raw in raw_rejects
            if numbers[pos] not in marked
        ]
        rejects += [(f"line {o.line_no}", str(o.reason), o.preview) for o in oversize]
        rejects.sort(key=lambda r: int(r[0].split()[1]))
        if rejects:  # rare: rejected lines are known only once the scan is done, so they join in a second write
            tmp = append_rejects(con, tmp, dest, rejects)
        read, bad = con.execute(
            "select count(*), count(*) filter (where reason is not null) from read_parquet($p)", {"p": str(tmp)}
        ).fetchone()
        publish(tmp, dest)
    finally:
        con.close()
    return StageResult(read, bad)


def append_rejects(
    con: duckdb.DuckDBPyConnection, staged: Path, dest: Path, rejects: list[tuple[str, str, str]]
) -> Path:
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
    con.sql(
        """
        select * from read_parquet($staged)
        union all by name
        select null::bigint as record_no, location, reason, raw from reject_rows
        """,
        params={"staged": str(staged)},
    ).write_parquet(str(out), compression="zstd")
    con.unregister("reject_rows")
    staged.unlink()
    return out


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
