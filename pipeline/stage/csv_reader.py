"""Upstream Liger benchmark CSV -> one staged Parquet file (good rows and quarantined rows together).

DuckDB parses (by column name, streaming, multi-threaded) and its reject store gives the line
and raw text of structurally broken lines; value checks are one vectorized SQL pass. Python
only touches the header, each *distinct* config string and each distinct KernelIndex identity key:
SQL writes and hashes the run KernelIndex would make of a row (`ki_sql.run_text_sql`). A row whose
numbers or timestamp SQL cannot write as ECMAScript does goes through the per-row reference, `ki_map`.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import duckdb
import pyarrow as pa

from pipeline.common import duck
from pipeline.config import MAX_COLUMNS, MAX_LINE_BYTES
from pipeline.contracts import kernelindex as ki
from pipeline.contracts.digests import canonical_json, measurement_digest_sql
from pipeline.contracts.reasons import DUCKDB_REJECT_REASON, Reason
from pipeline.contracts.rules import (
    bad_version_clause,
    convert_sql,
    future_timestamp_clause,
    nul_character_clause,
    observed_at_text_sql,
    quantile_reason_clauses,
    unit_sql,
)
from pipeline.stage import driver
from pipeline.stage import kernelindex_sql as ki_sql
from pipeline.stage.distinct import DistinctMap, register_is_version
from pipeline.stage.oversize import RAW_PREVIEW_CHARS

# Upstream's header (ki.CSV_COLUMNS, the one list of it); unlike KernelIndex, the reader takes a file without x_label.
OPTIONAL_COLUMNS = ("x_label",)
REQUIRED_COLUMNS = tuple(c for c in ki.CSV_COLUMNS if c not in OPTIONAL_COLUMNS)
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

# KernelIndex's mapping of a row (contracts/kernelindex/), computed from the raw strings as its importer
# reads them: the run's externalId and digest, the five objects' digests (ki_*; the OperationSpec's for every
# row of a curated kernel), why the row has no KernelIndex identity (null: it has), and the raw identity key
# (JSON of IDENTITY_COLUMNS) from which the model rebuilds the objects once per distinct key.
KI_INPUTS = (
    *ki.IDENTITY_COLUMNS,
    "metric_name",
    "y_value_20",
    "y_value_50",
    "y_value_80",
    "timestamp",
    "liger_version",
)
KI_FIELDS = (
    "external_id",
    "run_digest",
    "operation_digest",
    "ki_workload_digest",
    "ki_implementation_digest",
    "ki_protocol_digest",
    "ki_environment_digest",
    "identity_reason",
    "ki_identity_key",
)
KI_STRUCT = pa.struct([(f, pa.string()) for f in KI_FIELDS])
KI_STRUCT_SQL = "STRUCT(" + ", ".join(f"{f} VARCHAR" for f in KI_FIELDS) + ")"

# A staged CSV file's columns (good and quarantined rows together).
STAGED_SCHEMA = pa.schema(
    [("record_no", pa.int64())]
    + [
        (c, pa.string())
        for c in ("location", "reason", "raw", "measurement_digest", "kernel_name", "kernel_provider")
        + ("kernel_operation_mode", "metric_name", "metric_unit", "x_name", "x_label", "x_value", "extra_config")
        + ("gpu_name",)
    ]
    + [("observed_at", pa.timestamp("us")), ("observed_at_text", pa.string()), ("liger_version", pa.string())]
    + [(c, pa.float64()) for c in ("p20", "p50", "p80")]
    + [("occurrence", pa.int64())]
    + [(c, pa.string()) for c in KI_FIELDS]
    + [("identity", pa.string())]
)


def _guard(path: Path) -> driver.Guard:
    """First line only, bounded: a 10^6-column or 1 GB header never reaches the CSV engine. The line
    ends at LF, CRLF or a lone CR (stage/line_endings.py)."""
    with path.open("rb") as fh:
        first = fh.readline(MAX_LINE_BYTES + 1)
    if not first.strip():
        return driver.Guard(empty=True)  # empty file: nothing to read, not an error
    ends = [i for i in (first.find(b"\r"), first.find(b"\n")) if i >= 0]
    first = first[: min(ends, default=len(first))]
    if len(first) >= MAX_LINE_BYTES:
        return driver.Guard(refused=(Reason.LINE_TOO_LONG, first[:RAW_PREVIEW_CHARS].decode("utf-8", "replace")))
    try:
        text = first.decode("utf-8-sig")
    except UnicodeDecodeError:
        return driver.Guard(refused=(Reason.UNREADABLE_BYTES, first[:RAW_PREVIEW_CHARS].decode("utf-8", "replace")))
    if text.count(",") + 1 > MAX_COLUMNS:
        return driver.Guard(refused=(Reason.HEADER_TOO_WIDE, text[:RAW_PREVIEW_CHARS]))
    try:
        raw_header = next(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        return driver.Guard(refused=(Reason.MALFORMED_CSV, f"{exc}: {text[:RAW_PREVIEW_CHARS]}"))
    header = [h.strip() for h in raw_header]
    repeated = sorted({h for h in header if header.count(h) > 1 and h in REQUIRED_COLUMNS + OPTIONAL_COLUMNS})
    if repeated:  # which of the two would be read is a guess: refuse the file
        return driver.Guard(
            refused=(Reason.DUPLICATE_COLUMN, f"{','.join(repeated)} named twice in header: {text.strip()}")
        )
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        return driver.Guard(
            refused=(Reason.MISSING_REQUIRED_COLUMN, f"missing {','.join(missing)} in header: {text.strip()}")
        )
    scan = driver.Scan(MAX_LINE_BYTES, MAX_COLUMNS, Reason.LINE_TOO_LONG, Reason.LONG_ROW, skip_first_line=True)
    return driver.Guard(scan=scan, context=(tuple(header), ki.header_problem(raw_header)))


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


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    """The Python functions the CSV query calls: on distinct values only (remembered across batches and
    files), a config canonicalized and an identity key resolved; per row, `ki_map`, the reference for the
    rows whose run SQL does not write (`ki_sql.run_sql_is_exact`)."""
    con.create_function(
        "canonical_config",
        DistinctMap(_canonical_config, pa.string()),
        ["VARCHAR"],
        "VARCHAR",
        type="arrow",
        null_handling="special",
    )
    con.create_function(
        "ki_identity",
        DistinctMap(_identity_pieces, IDENTITY_PIECES),
        ["VARCHAR"],
        _struct_sql(IDENTITY_PIECES),
        type="arrow",
        null_handling="special",
    )
    register_is_version(con)
    con.create_function(
        "ki_map", _ki_udf, ["VARCHAR"] * (len(KI_INPUTS) + 1), KI_STRUCT_SQL, type="arrow", null_handling="special"
    )


def _struct_sql(struct: pa.StructType) -> str:
    return "STRUCT(" + ", ".join(f"{f.name} VARCHAR" for f in struct) + ")"


# What a row's KernelIndex mapping takes from its identity key (JSON of the raw IDENTITY_COLUMNS): the
# digests, and the pieces `ki_sql.run_text_sql` joins around the row's timestamp and numbers.
IDENTITY_SLOTS = ("environment", "implementation", "protocol", "workload", "benchmark")
IDENTITY_PIECES = pa.struct(
    [(f, pa.string()) for f in ("reason", "kernel_operation", "operation", "workload_digest")]
    + [(f, pa.string()) for f in ("implementation_digest", "protocol_digest", "environment_digest", "key")]
    + [(f"{f}_json", pa.string()) for f in IDENTITY_SLOTS]
    + [(f, pa.string()) for f in ("external_id_prefix", "external_id_prefix_json")]
)


def _identity_pieces(key: str) -> dict:
    values = json.loads(key)
    kernel, mode, provider, _, _, _, gpu = values
    identity = ki.resolve_identity(*values)
    kernel_operation = ki.operation_digest(kernel)
    if isinstance(identity, ki.Skip):
        return {"reason": ki.IDENTITY_REASONS[identity.reason], "kernel_operation": kernel_operation}
    frame = ki.run_frame(identity, mode, provider, gpu)
    return {
        "kernel_operation": kernel_operation,
        "operation": identity.operation_digest,
        "workload_digest": identity.workload_digest,
        "implementation_digest": identity.implementation_digest,
        "protocol_digest": identity.protocol_digest,
        "environment_digest": identity.environment_digest,
        "key": json.dumps(values, ensure_ascii=False),
        **{f"{f}_json": frame.slots[f] for f in IDENTITY_SLOTS},
        "external_id_prefix": frame.external_id_prefix,
        "external_id_prefix_json": ki.json_string_halves(frame.external_id_prefix)[0],
    }


def _ki_udf(k, m, p, xn, xv, c, g, metric, y20, y50, y80, ts, v, problem):  # noqa: PLR0913  DuckDB counts the parameters
    return ki_map(k, m, p, xn, xv, c, g, metric, y20, y50, y80, ts, v, problem)


def ki_map(*arrays: pa.Array | pa.ChunkedArray) -> pa.Array:
    """KernelIndex's mapping of one batch of rows (`KI_INPUTS` as raw strings, then the file's header problem).

    The five objects come from `resolve_identity`, cached per distinct key; only a mapped row's run digest is
    written and hashed per row (it holds the row's values and timestamp). The duplicate rule (a second row of a file
    with an earlier row's externalId) needs the file's earlier rows: the model applies it."""
    cols = [(a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a).to_pylist() for a in arrays]
    problem = cols[-1][0] if cols[-1] else None
    out: list[tuple] = []
    keys: dict[int, str] = {}
    for values in zip(*cols[:-1], strict=True):
        kernel, mode, provider, _, _, _, gpu, metric, y20, y50, y80, timestamp, _ = values
        op = ki.operation_digest(kernel)
        if problem is not None:
            out.append((None, None, op, None, None, None, None, ki.rejected_reason(problem), None))
            continue
        if metric != "speed":
            out.append((None, None, op, None, None, None, None, ki.IDENTITY_REASONS["memoryRows"], None))
            continue
        identity = ki.resolve_identity(*values[:7])
        if isinstance(identity, ki.Skip):
            out.append((None, None, op, None, None, None, None, ki.IDENTITY_REASONS[identity.reason], None))
            continue
        try:
            external_id, run_digest = ki.row_run_digest(identity, mode, provider, gpu, timestamp, y20, y50, y80)
        except ValueError as error:
            out.append((None, None, op, None, None, None, None, ki.rejected_reason(str(error)), None))
            continue
        key = keys.get(id(identity))
        if key is None:
            key = keys[id(identity)] = json.dumps(list(values[:7]), ensure_ascii=False)
        out.append(
            (
                external_id,
                run_digest,
                identity.operation_digest,
                identity.workload_digest,
                identity.implementation_digest,
                identity.protocol_digest,
                identity.environment_digest,
                None,
                key,
            )
        )
    fields = [pa.array([r[i] for r in out], pa.string()) for i in range(len(KI_FIELDS))]
    return pa.StructArray.from_arrays(fields, fields=list(KI_STRUCT))


def _unique_columns(header: list[str]) -> dict[str, str]:
    """Header names deduplicated so DuckDB accepts them (we only read the known ones, by name); a field
    named like a column the query adds is read as a repeat."""
    seen: dict[str, int] = dict.fromkeys(("row_no", "record_no", "line_hash", SOURCE_FILE), 1)
    columns: dict[str, str] = {}
    for h in header:
        name = h if h not in seen else f"{h}__dup{seen[h]}"
        seen[h] = seen.get(h, 0) + 1
        columns[name] = "VARCHAR"
    return columns


def _q(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


# The raw fields KernelIndex reads (an empty field is "" to it, NULL to DuckDB).
KI_RAW = {c: f"coalesce({_q(c)}, '')" for c in KI_INPUTS}
KI_ARGS_SQL = ", ".join(KI_RAW.values())
_NUMBER_NAMES = (("ki_ms20", "y_value_20"), ("ki_ms50", "y_value_50"), ("ki_ms80", "y_value_80"))


def _ki_struct_sql(**fields: str) -> str:
    return "{" + ", ".join(f"'{f}': {fields.get(f, 'null')}" for f in KI_FIELDS) + "}::" + KI_STRUCT_SQL


def _ki_sql() -> str:
    """The row's KernelIndex mapping: a memory row, a skipped identity, or a run SQL writes exactly; any
    other row (a file-level problem, a number or timestamp SQL does not write as ECMAScript does) through
    the per-row reference `ki_map`."""
    texts = {"ms20": "ki_ms20_text", "ms50": "ki_ms50_text", "ms80": "ki_ms80_text"}
    slots = {
        **{f: f"ki_id.{f}_json" for f in IDENTITY_SLOTS},
        "observed": ki_sql.observed_at_json_sql("ki_ts"),
        "external_id": "(ki_id.external_id_prefix_json || ki_ts_kebab || '\"')",
        "median": "cast(cast(ki_ns50 as bigint) as varchar)",
        "ns20": "cast(cast(ki_ns20 as bigint) as varchar)",
        "ns80": "cast(cast(ki_ns80 as bigint) as varchar)",
        **texts,
    }
    exact = ki_sql.run_sql_is_exact(
        "ki_ms20", "ki_ms50", "ki_ms80", "ki_ns20", "ki_ns50", "ki_ns80", " || ".join(texts.values())
    )
    skipped = "'" + ki.IDENTITY_REASONS["memoryRows"].replace("'", "''") + "'"
    identity_digests = {f"ki_{f}_digest": f"ki_id.{f}_digest" for f in ("workload", "implementation")}
    identity_digests |= {f"ki_{f}_digest": f"ki_id.{f}_digest" for f in ("protocol", "environment")}
    identity_digests["ki_identity_key"] = "ki_id.key"
    run = _ki_struct_sql(
        external_id="ki_id.external_id_prefix || ki_ts_kebab",
        run_digest="'sha256:' || sha256(" + ki_sql.run_text_sql(slots) + ")",
        operation_digest="ki_id.operation",
        **identity_digests,
    )
    return f"""case
            when $ki_problem is null and {KI_RAW["metric_name"]} <> 'speed'
                then {_ki_struct_sql(operation_digest="ki_id.kernel_operation", identity_reason=skipped)}
            when $ki_problem is null and ki_id.reason is not null
                then {_ki_struct_sql(operation_digest="ki_id.kernel_operation", identity_reason="ki_id.reason")}
            when $ki_problem is null and ki_ts is not null and {exact} then {run}
            else ki_map({KI_ARGS_SQL}, $ki_problem)
        end"""


# KernelIndex's inputs per row: the identity's pieces (Python, once per distinct key), the timestamp's and
# the quantiles as numbers and texts (SQL).
_KI_INPUTS_SQL = (
    """ki_inputs as (
        select *,
            ki_identity(to_json(["""
    + ", ".join(KI_RAW[c] for c in ki.IDENTITY_COLUMNS)
    + """])) as ki_id,
            """
    + "{} as ki_ts, {} as ki_ts_kebab".format(*ki_sql.csv_timestamp_sql(KI_RAW["timestamp"]))
    + """,
            """
    + ",\n            ".join(f"{ki_sql.js_number_sql(KI_RAW[c])} as {n}" for n, c in _NUMBER_NAMES)
    + """
        from parsed
    ),
    ki_numbers as (
        select *,
            """
    + ",\n            ".join(
        f"{ki_sql.js_round_sql(f'{n} * 1000000')} as {n.replace('ms', 'ns')}, {ki_sql.js_value_text_sql(n)} as {n}_text"
        for n, _ in _NUMBER_NAMES
    )
    + """
        from ki_inputs
    )"""
)

# The column naming the file a row came from; a header field of that name is read as a repeat
# (`_unique_columns`).
SOURCE_FILE = "__source_file"
# Read every field VARCHAR, by name, from one or several files of one header ($paths). The empty
# OVER () keeps the order of the files and of each file's rows (DuckDB streams that window in order),
# so a row's number in its file is its record's ordinal there.
_READ_SQL = f"""
    rows_read as (
        select row_number() over () as row_no, *
        from read_csv($paths, header = true, auto_detect = false, columns = $columns,
                      delim = ',', quote = '"', escape = '"', strict_mode = true,
                      max_line_size = $max_line, store_rejects = true, filename = '{SOURCE_FILE}',
                      rejects_table = 'csv_rejects', rejects_scan = 'csv_reject_scans')
    ),"""
# `file_rows`: each row, its record_no and `line_hash` (of every field, for `occurrence`); `parsed`: what
# is judged, typed and mapped. Over several files (snapshots of one file keep most of their lines), each
# distinct line once, joined back to its rows by `staged_rows_sql`; over one file, whose lines are nearly all
# distinct, every row (finding the distinct lines would cost more than it saves). A file's first row
# number comes from a grouping: a window over the files carried every field through its sort.
_LINES_SQL = {
    True: f"""
    file_rows as (
        select r.row_no - s.first_row_no + 1 as record_no, {{line_hash}} as line_hash, r.* exclude (row_no)
        from rows_read r
        join (select {SOURCE_FILE}, min(row_no) as first_row_no from rows_read group by all) s using ({SOURCE_FILE})
    ),
    parsed as (select distinct * exclude (record_no, line_hash, {SOURCE_FILE}) from file_rows),""",
    False: """
    file_rows as (select row_no as record_no, {line_hash} as line_hash, * exclude (row_no) from rows_read),
    parsed as (select * exclude (line_hash) from file_rows),""",
}
_PARSED_SQL = (
    _KI_INPUTS_SQL
    + """,
    casted as (
        select *,
            canonical_config(extra_benchmark_config_str) as config_canonical,
            trim(kernel_name) as kernel_name__trimmed,
            trim(kernel_provider) as kernel_provider__trimmed,
            trim(kernel_operation_mode) as kernel_operation_mode__trimmed,
            trim(metric_name) as metric_name__trimmed,
            trim(metric_unit) as metric_unit__trimmed,
            {UNIT_SQL} as metric_unit__stored,
            trim(x_name) as x_name__trimmed,
            trim(x_value) as x_value__trimmed,
            trim(gpu_name) as gpu_name__trimmed,
            trim(liger_version) as liger_version__trimmed,
            """
    + _ki_sql()
    + """ as ki,
            {V20} as v20,
            {V50} as v50,
            {V80} as v80,
            -- upstream's own format first (fast path); anything else ISO-8601 with a zone goes through ICU
            coalesce(try_strptime("timestamp", '%Y-%m-%d %H:%M:%S'),
                     try_cast(try_cast("timestamp" as timestamptz) as timestamp)) as ts
        from ki_numbers
    )"""
)
# metric_unit: stored in its canonical unit (contracts/rules.py UNITS), values converted exactly.
_PARSED_SQL = _PARSED_SQL.replace("{UNIT_SQL}", unit_sql("trim(metric_unit)"))
for _v, _col in (("{V20}", "y_value_20"), ("{V50}", "y_value_50"), ("{V80}", "y_value_80")):
    _PARSED_SQL = _PARSED_SQL.replace(_v, convert_sql(f"try_cast({_col} as double)", "trim(metric_unit)"))


def _line_values_sql(header: list[str], columns: dict[str, str], kept: str) -> str:
    """`line_values`: the lines of `parsed` judged and typed, with the ``kept`` columns (what joins a
    line to its rows)."""
    x_label = "x_label" if "x_label" in columns else "null::varchar"
    raw_expr = "concat_ws(',', " + ", ".join(f"coalesce({_q(c)}, '')" for c in header if c in columns) + ")"
    # a field staged trimmed is trimmed once (in `casted`), for both the empty check and the output
    empty = " or ".join(
        f"nullif({_q(c + '__trimmed') if c in TRIMMED else 'trim(' + _q(c) + ')'}, '') is null" for c in NON_EMPTY
    )
    names = [_q(c + "__trimmed") for c in TRIMMED] + (["x_label"] if "x_label" in columns else [])
    return f"""
        judged as (
            select *,
                case
                    {nul_character_clause(names)}
                    when {empty} then '{Reason.EMPTY_FIELD}'
                    {bad_version_clause("is_version(liger_version__trimmed)")}
                    when metric_unit__stored is null then '{Reason.UNKNOWN_UNIT}'
                    {quantile_reason_clauses("v20", "v50", "v80")}
                    when ts is null then '{Reason.BAD_TIMESTAMP}'
                    {future_timestamp_clause("ts")}
                    when config_canonical is null then '{Reason.BAD_CONFIG_JSON}'
                end as reason
            from casted
        ),
        line_values as (
            select
                {kept},
                reason,
                case when reason is not null then left({raw_expr}, {RAW_PREVIEW_CHARS}) end as raw,
                kernel_name__trimmed as kernel_name,
                kernel_provider__trimmed as kernel_provider,
                kernel_operation_mode__trimmed as kernel_operation_mode,
                metric_name__trimmed as metric_name,
                coalesce(metric_unit__stored, metric_unit__trimmed) as metric_unit,
                x_name__trimmed as x_name,
                {x_label} as x_label,
                x_value__trimmed as x_value,
                config_canonical as extra_config,
                gpu_name__trimmed as gpu_name,
                ts as observed_at,
                {observed_at_text_sql("ts")} as observed_at_text,
                liger_version__trimmed as liger_version,
                v20 as p20, v50 as p50, v80 as p80,
                ki
            from judged
        )"""


def _fields_sql(columns: dict[str, str]) -> str:
    """Every field of a line, an empty one as '' (as a list of SQL arguments)."""
    return ", ".join(f"coalesce({_q(c)}, '')" for c in columns)


def _occurrence_sql(columns: dict[str, str]) -> str:
    """`repeated_rows`: the occurrence of each row whose line its file holds more than once (the rows
    identical in every field are told apart by their order in the file; every other row is its line's
    first). The candidates are the rows whose 64-bit hash of the line repeats in their file; among them the
    line itself, as text, decides (a collision only adds a candidate). A window over every row carried
    every staged column through its sort, and that sort was a large part of the staging query."""
    line_text = f"md5_number(concat_ws(chr(31), {_fields_sql(columns)}))"
    return f"""repeated_line as (
            select {SOURCE_FILE}, line_hash from file_rows group by all having count(*) > 1
        ),
        repeated_rows as (
            select {SOURCE_FILE}, record_no,
                row_number() over (partition by {SOURCE_FILE}, {line_text} order by record_no) as occurrence
            from file_rows semi join repeated_line using ({SOURCE_FILE}, line_hash)
        )"""


def staged_rows_sql(header: list[str], *, several: bool) -> tuple[str, dict]:
    """The query staging the CSV files ``$paths`` (each of this header, in order; ``several`` when there
    may be more than one): every row with the staged file's columns and the file it came from
    (SOURCE_FILE), and its parameters but $paths and $ki_problem. One pass: parse, judge, map and hash;
    over several files a line is judged, typed and mapped once (`_LINES_SQL`)."""
    columns = _unique_columns(header)
    if several:
        raw_names = ", ".join(f"__raw{i}" for i in range(len(columns)))
        same_line = " and ".join(f"f.{_q(c)} is not distinct from l.__raw{i}" for i, c in enumerate(columns))
        kept = ", ".join(f"{_q(c)} as __raw{i}" for i, c in enumerate(columns))
        rows = f"""select f.{SOURCE_FILE}, f.record_no, l.* exclude ({raw_names})
            from file_rows f join line_values l on {same_line}"""
    else:
        kept = f"{SOURCE_FILE}, record_no"
        rows = "select * from line_values"
    lines = _LINES_SQL[several].format(line_hash=f"hash({_fields_sql(columns)})")
    sql = f"""
        with {_READ_SQL}{lines}{_PARSED_SQL},
        {_line_values_sql(header, columns, kept)},
        {_occurrence_sql(columns)},
        typed as ({rows}),
        numbered as (
            select t.*, coalesce(r.occurrence, 1) as occurrence
            from typed t left join repeated_rows r using ({SOURCE_FILE}, record_no)
        )
        select {SOURCE_FILE}, record_no, 'record ' || record_no as location, reason, raw,
               case when reason is null then {measurement_digest_sql()} end as measurement_digest,
               kernel_name, kernel_provider, kernel_operation_mode, metric_name, metric_unit,
               x_name, x_label, x_value, extra_config, gpu_name, observed_at, observed_at_text,
               liger_version, p20, p50, p80, occurrence,
               {", ".join(f"ki.{f} as {f}" for f in KI_FIELDS)},
               case when ki.identity_reason is not null then 'derived'
                    when ki.external_id is not null then 'kernelindex' end as identity
        from numbered
        """
    return sql, {"columns": columns, "max_line": MAX_LINE_BYTES}


def _parse(job: driver.Job) -> None:
    header, ki_problem = job.guard.context
    sql, params = staged_rows_sql(header, several=False)
    # The output path is a parameter (duck.write_parquet): no path is ever pasted into SQL.
    duck.write_parquet(
        job.con,
        f"select * exclude ({SOURCE_FILE}) from ({sql})",
        {**params, "paths": [str(job.path)], "ki_problem": ki_problem},
        job.tmp,
    )


def _parse_several(con: duckdb.DuckDBPyConnection, paths: list[Path], context: tuple, folder: Path) -> set[str]:
    """Stage ``paths`` (one header) in one query: ``folder``/file_index=<i>/ holds the i-th file's rows
    (from 1; no folder for a file without rows). Returns the paths with lines the parser refused."""
    header, ki_problem = context
    sql, params = staged_rows_sql(header, several=True)
    names = [str(p) for p in paths]
    con.execute(
        f"""copy (select list_position($paths, {SOURCE_FILE}) as file_index, * exclude ({SOURCE_FILE}) from ({sql}))
        to $folder (format parquet, compression zstd, partition_by (file_index))""",
        {**params, "paths": names, "ki_problem": ki_problem, "folder": str(folder)},
    )
    found = con.execute("select distinct s.file_path from csv_rejects join csv_reject_scans s using (scan_id, file_id)")
    return {row[0] for row in found.fetchall()}


def _rejects(job: driver.Job) -> list[driver.Reject]:
    rejects, _ = driver.parser_rejects(
        job, "csv_rejects", DUCKDB_REJECT_REASON, Reason.MALFORMED_CSV, strip_newlines=True
    )
    return rejects


READER = driver.Reader(
    schema=STAGED_SCHEMA,
    register=register_functions,
    guard=_guard,
    parse=_parse,
    rejects=_rejects,
    parse_several=_parse_several,
)


def stage_csv_file(path: Path, dest: Path) -> None:
    """Parse ``path`` and write the staged Parquet ``dest`` atomically, on a database of its own (the
    staging store stages a batch on one database: :func:`driver.stage_or_quarantine`)."""
    driver.stage(READER, path, dest)
