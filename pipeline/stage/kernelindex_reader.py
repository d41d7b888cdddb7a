"""kernelindex bundles ({run, protocol, environment}) -> one staged Parquet file per input file.

Every structural check runs vectorized in DuckDB over the file's lines; Python only parses
each *distinct* protocol / environment object once, to validate it with pydantic and
recompute its digest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pyarrow as pa
from pydantic import ValidationError

from pipeline.common import duck
from pipeline.common.files import atomic_path
from pipeline.config import API_VERSION, MAX_JSON_DEPTH, MAX_JSON_FILE_BYTES, MAX_LINE_BYTES
from pipeline.contracts.digests import canonical_json, object_digest
from pipeline.contracts.kernelindex import js_json_parse
from pipeline.contracts.kernelindex import run_digest as ki_run_digest
from pipeline.contracts.reasons import DUCKDB_LINE_REJECT_REASON, Reason
from pipeline.contracts.records import RUN_KIND, BenchmarkProtocol, ExecutionEnvironment, run_string_patterns
from pipeline.contracts.rules import (
    bad_version_clause,
    future_timestamp_clause,
    nul_character_clause,
    observed_at_text_sql,
    quantile_reason_clauses,
)
from pipeline.stage import driver
from pipeline.stage import kernelindex_sql as ki_sql
from pipeline.stage.distinct import DistinctMap, register_is_version
from pipeline.stage.oversize import RAW_PREVIEW_CHARS

LINE_FORMATS = (".ndjson", ".jsonl")

# Every string taken from a line (column -> JSON path), pulled by one multi-path call: one parse per line.
EXTRACTED = {
    "run_api": "$.run.apiVersion",
    "protocol_api": "$.protocol.apiVersion",
    "environment_api": "$.environment.apiVersion",
    "run_kind": "$.run.kind",
    "protocol_digest": "$.run.spec.protocolDigest",
    "environment_digest": "$.run.spec.environmentDigest",
    "workload_digest": "$.run.spec.workloadDigest",
    "implementation_digest": "$.run.spec.implementationDigest",
    "observed_at_raw": "$.run.spec.observedAt",
    "benchmark": "$.run.spec.sourceNative.benchmark",
    "external_id": "$.run.spec.sourceNative.externalId",
    "liger_version": "$.run.metadata.labels.liger_version",
    "run_name": "$.run.metadata.name",
    "ms_20": "$.run.spec.sourceNative.metrics.ms_20",
    "ms_50": "$.run.spec.sourceNative.metrics.ms_50",
    "ms_80": "$.run.spec.sourceNative.metrics.ms_80",
}
# The run's string rules come from the pydantic models (column -> regex, bound as parameters).
RUN_PATTERNS = {col: run_string_patterns()[path] for col, path in EXTRACTED.items() if path in run_string_patterns()}
assert len(RUN_PATTERNS) == len(run_string_patterns()), "a pattern-constrained run field is not extracted"
_FIELDS_SQL = ", ".join(f"s[{i}] as {col}" for i, col in enumerate(EXTRACTED, 1))
# What Python says about one distinct protocol / environment object.
CHECKED = pa.struct([("digest", pa.string()), ("canonical", pa.string()), ("error", pa.string())])
CHECKED_SQL = "STRUCT(digest VARCHAR, canonical VARCHAR, error VARCHAR)"
# Duplicate keys: DuckDB's parser keeps the first, Python's the last, so neither is trusted. Every object of
# the line is checked here, at any depth and inside arrays (json_keys lists a repeated key twice; `$..*` is
# every value under the root); a .json file's bundles carry DUPLICATE_MARKER where Python saw one.
DUPLICATE_MARKER = "\u001fliger:duplicate_key"
_DUPLICATE_KEYS_SQL = (
    "(len(json_keys(line)) <> len(list_distinct(json_keys(line)))"
    " or coalesce(list_bool_or(list_transform(json_keys(line, '$..*'), lambda k: len(k) <> len(list_distinct(k)))),"
    " false) or contains(line, $duplicate_marker))"
)
# Numbers JSON has not (NaN, Infinity, 1e400, a 400-digit integer): DuckDB reads them, JSON.parse and
# KernelIndex's digest do not, anywhere in the record. Only a line with such a token (or a word holding
# "nan"/"inf") is walked value by value.
_NON_FINITE_SQL = (
    "(regexp_matches(line, '(?i)nan|inf|[0-9][e][+]?[0-9]{3}|[0-9]{309}') and coalesce(list_bool_or(list_transform("
    "json_extract(line, '$..*'),"
    " lambda v: json_type(v) = 'DOUBLE' and not isfinite(try_cast(v::varchar as double)))), false))"
)
_PATTERNS_BROKEN_SQL = " or ".join(f"not regexp_full_match(coalesce({col}, ''), ${col}_re)" for col in RUN_PATTERNS)


def _lines_from_json_file(path: Path) -> tuple[list[str], tuple[Reason, str] | None]:
    """A .json file holds one bundle or an array of bundles; re-emit them one per line."""
    if path.stat().st_size > MAX_JSON_FILE_BYTES:
        return [], (Reason.FILE_TOO_LARGE, f"{path.stat().st_size} bytes")
    data = path.read_bytes()
    if not data.strip(b" \t\r\n\xef\xbb\xbf"):
        return [], None  # an empty file is not an error
    try:
        value = json.loads(data.decode("utf-8-sig"), object_pairs_hook=_mark_duplicates)
    except UnicodeDecodeError:
        return [], (Reason.UNREADABLE_BYTES, data[:RAW_PREVIEW_CHARS].decode("utf-8", "replace"))
    except RecursionError:
        return _split_deep_json(path, data)
    except ValueError:
        return [], (Reason.TRUNCATED_JSON, data[:RAW_PREVIEW_CHARS].decode("utf-8", "replace"))
    items = value if isinstance(value, list) else [value]
    try:
        return [json.dumps(v, ensure_ascii=False, allow_nan=True) for v in items], None
    except RecursionError:
        return _split_deep_json(path, data)


def _mark_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object; one that names a key twice keeps a marker key, so its bundle is quarantined."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        obj[DUPLICATE_MARKER] = True
    return obj


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKeyError
    return obj


class _DuplicateKeyError(ValueError):
    pass


def _split_deep_json(path: Path, data: bytes) -> tuple[list[str], tuple[Reason, str] | None]:
    """Python's parser recurses; DuckDB's (yyjson) does not. Split the document there, so one
    10^5-deep element is quarantined as json_too_deep and the bundles beside it still land."""
    preview = data[:RAW_PREVIEW_CHARS].decode("utf-8", "replace")
    text = data.decode("utf-8-sig")
    con = duckdb.connect()
    try:
        con.execute("SET enable_progress_bar = false")
        con.register("doc", pa.table({"content": pa.array([text], pa.string())}))
        valid, kind = con.execute("select json_valid(content), json_type(content) from doc").fetchone()
        if not valid:
            return [], (Reason.TRUNCATED_JSON, preview)
        if kind != "ARRAY":
            return [text], None
        return [
            r[0]
            for r in con.execute("select value::varchar from doc, json_each(content) order by key::bigint").fetchall()
        ], None
    finally:
        con.close()


_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(text: str) -> int:
    """Nesting depth of JSON text (strings skipped), stopping early once past MAX_JSON_DEPTH."""
    depth = deepest = 0
    for ch in _STRING_RE.sub("", text):
        step = _BRACKETS.get(ord(ch))
        if step:
            depth += step
            if depth > deepest:
                deepest = depth
                if deepest > MAX_JSON_DEPTH:
                    break
    return deepest


def _check_object(text: str | None, model: type) -> tuple[str | None, str | None, str | None]:
    """(digest, canonical full json, error reason) for one distinct protocol/environment."""
    if text is None:
        return None, None, str(Reason.INVALID_RECORD)
    try:
        obj = json.loads(text, object_pairs_hook=_no_duplicates)
    except RecursionError:
        return None, None, str(Reason.JSON_TOO_DEEP)
    except _DuplicateKeyError:
        return None, None, str(Reason.DUPLICATE_KEY)
    except ValueError:
        return None, None, str(Reason.INVALID_RECORD)
    if not isinstance(obj, dict):
        return None, None, str(Reason.NOT_AN_OBJECT)
    if obj.get("apiVersion") != API_VERSION:
        return None, None, str(Reason.UNKNOWN_API_VERSION)
    try:
        model.model_validate(obj)
        return object_digest(obj), canonical_json(obj), None
    except (ValidationError, ValueError, KeyError, RecursionError):
        return None, None, str(Reason.INVALID_RECORD)


def register_functions(con: duckdb.DuckDBPyConnection) -> None:
    """The Python functions the bundle query calls: each distinct protocol / environment validated
    once (remembered across batches and files), and the depth of the rare line with enough brackets
    to be too deep."""
    for name, model in (("check_protocol", BenchmarkProtocol), ("check_environment", ExecutionEnvironment)):
        con.create_function(
            name, _object_checker(model), ["VARCHAR"], CHECKED_SQL, type="arrow", null_handling="special"
        )
    con.create_function(
        "run_digest",
        DistinctMap(_run_digest, pa.string()),
        ["VARCHAR"],
        "VARCHAR",
        type="arrow",
        null_handling="special",
    )
    register_is_version(con)
    con.create_function("is_too_deep", _too_deep, ["VARCHAR"], "BOOLEAN", type="arrow", null_handling="special")


def _run_digest(text: str) -> str | None:
    """`object_digest` of the record's run as KernelIndex computes it (numbers read as JSON.parse reads them);
    None when the run is not an object or cannot be canonicalized."""
    try:
        run = js_json_parse(text)
        return ki_run_digest(run) if isinstance(run, dict) and "spec" in run else None
    except (ValueError, KeyError, TypeError, RecursionError):
        return None


def _guard(path: Path) -> driver.Guard:
    """A line file goes to the pre-scan (lines beyond MAX_LINE_BYTES never reach DuckDB: past ~100 MB
    its reject store loses them); a .json file is read here into its bundles, one per line."""
    if path.suffix.lower() in LINE_FORMATS:
        return driver.Guard(scan=driver.Scan(MAX_LINE_BYTES, None, Reason.LINE_TOO_LONG, Reason.LINE_TOO_LONG))
    lines, file_error = _lines_from_json_file(path)
    return driver.Guard(rejects=[] if file_error is None else [("file", *file_error)], context=lines)


# `numbered_lines(path, max_line)`: a line file's lines with their row numbers, as a temporary macro
# (private to this connection, unlike a view, so files staged side by side never see each other's).
# One column per line: U+001F never occurs in valid JSON text, so it is a safe "no delimiter".
# The empty OVER () streams in file order: row_no is the physical line, until a rejected line.
_NUMBERED_LINES_SQL = """
    create temp macro numbered_lines(path, max_line) as table
    select row_number() over () as record_no, line
    from read_csv(path, header = false, auto_detect = false, columns = {'line': 'VARCHAR'},
                  delim = chr(31), quote = '', escape = '', max_line_size = max_line,
                  strict_mode = false, store_rejects = true,
                  rejects_table = 'line_rejects', rejects_scan = 'line_reject_scans')
    """
# The same macro over the bundles of a .json file (registered as `json_lines`).
_NUMBERED_BUNDLES_SQL = (
    "create temp macro numbered_lines(path, max_line) as table "
    "select row_number() over () as record_no, line from json_lines"
)
# Lines -> one parse per line -> every field and the two objects' checks.
# A run of the CSV's shape (`ki_sql.RUN_SHAPE`), with strings SQL can take as they are (no escape in them or
# in the line) and numbers it writes as ECMAScript does, is hashed in SQL (`ki_sql.run_text_sql`); any other
# through `_run_digest`, in Python.
_RUN_SLOTS = [*ki_sql.RUN_STRING_SLOTS, *ki_sql.RUN_NUMBER_SLOTS, *ki_sql.RUN_ITEM_TEXTS]
_RUN_SLOT_PATHS = [*ki_sql.RUN_STRING_SLOTS.values(), *ki_sql.RUN_NUMBER_SLOTS.values(), *ki_sql.RUN_ITEM_TEXTS]


def _run_slot(name: str) -> str:
    return f"run_slot[{_RUN_SLOTS.index(name) + 1}]"


_RUN_NUMBERS_SQL = ", ".join(f"try_cast({_run_slot(n)}::varchar as double) as run_{n}" for n in ki_sql.RUN_NUMBER_SLOTS)
_RUN_TEXTS_SQL = ", ".join(f"{ki_sql.js_value_text_sql(f'run_{n}')} as run_{n}_text" for n in ki_sql.RUN_NUMBER_SLOTS)


def _run_digest_sql() -> str:
    texts = " || ".join(f"run_{n}_text" for n in ki_sql.RUN_NUMBER_SLOTS)
    numbers = ki_sql.run_sql_is_exact(*(f"run_{n}" for n in ("ms20", "ms50", "ms80", "ns20", "median", "ns80")), texts)
    strings = " and ".join(
        f"""starts_with({_run_slot(n)}, '"') and not contains({_run_slot(n)}, '\\')""" for n in ki_sql.RUN_STRING_SLOTS
    )
    items = " and ".join(
        f"{_run_slot(path)} = " + "'" + text.replace("'", "''") + "'" for path, text in ki_sql.RUN_ITEM_TEXTS.items()
    )
    shape = (
        "run_keys = $run_shape and list_sort(run_top_keys) in $run_top_keys"
        " and json_array_length(run_text, '$.spec.measurements') = 2"
    )
    slots = {n: _run_slot(n) for n in ki_sql.RUN_STRING_SLOTS} | {n: f"run_{n}_text" for n in ki_sql.RUN_NUMBER_SLOTS}
    return f"""case when {shape} and {strings} and {items} and {numbers}
                then 'sha256:' || sha256({ki_sql.run_text_sql(slots)})
                else run_digest(run_text) end"""


_RUN_DIGEST_SQL = _run_digest_sql()


_PARSED_SQL = (
    f"""
    lines as (
        -- Blank test: a cheap first-byte check; trim() only for lines that start with whitespace.
        select record_no, line from numbered_lines($path, $max_line)
        where line is not null and (left(line, 1) not in (' ', chr(9), chr(13)) or trim(line) <> '')
    ),
    source as (
        -- JSON nested deeper than any valid bundle is never parsed further (nor recursed into by
        -- Python): only a line with more brackets than the limit can be that deep.
        select record_no, line,
            case when strlen(line) - strlen(replace(replace(line, '{{', ''), '[', '')) > $limit
                 then is_too_deep(line) else false end as deep
        from lines
    ),
    extracted as (
        -- One parse per line: every path is pulled by a single multi-path call (the protocol and
        -- environment objects as their JSON text); it fails exactly when json_valid is false, so a
        -- line is valid when it yields a list. Valid JSON that opens with a brace is an object.
        select record_no, line, deep, s is not null as ok, s,
            case when s is not null then
                (case when left(line, 1) = '{{' then 'OBJECT' else json_type(line) end) end as top_type
        from (select *, case when not deep then try(json_extract_string(line, $paths)) end as s from source)
    ),
    fields as (
        select record_no, line, deep, ok, top_type,
            s[$protocol_at] as protocol_text, s[$environment_at] as environment_text, s[$run_at] as run_text,
            {_FIELDS_SQL}
        from extracted
    ),
    run_parts as (
        -- the run's slots as JSON texts and its objects' keys (sorted): one parse of the run each
        select *, json_extract(run_text, $run_slot_paths) as run_slot,
            list_transform(json_keys(run_text, $run_shape_paths), lambda k: list_sort(k)) as run_keys,
            json_keys(run_text) as run_top_keys
        from fields
    ),
    run_numbers as (
        select *, """
    + _RUN_NUMBERS_SQL
    + """ from run_parts
    ),
    run_texts as (
        select *, """
    + _RUN_TEXTS_SQL
    + """ from run_numbers
    ),
    parsed as (
        select * exclude (ms_20, ms_50, ms_80),
            try_cast(ms_20 as double) as p20, try_cast(ms_50 as double) as p50,
            try_cast(ms_80 as double) as p80,
            try_cast(try_cast(observed_at_raw as timestamptz) as timestamp) as observed_at,
            string_split(external_id, '/') as id_parts,
            string_split(benchmark, '/') as bench_parts,
            """
    + _RUN_DIGEST_SQL
    + """ as run_digest,
            check_protocol(protocol_text) as po,
            check_environment(environment_text) as eo
        from run_texts
    ),
    joined as (
        select *,
            po.digest as protocol_actual, po.canonical as protocol_json, po.error as protocol_error,
            eo.digest as environment_actual, eo.canonical as environment_json, eo.error as environment_error
        from parsed
    )"""
)


def _parse(job: driver.Job) -> None:
    line_format = job.guard.scan is not None
    if line_format:
        job.con.execute(_NUMBERED_LINES_SQL)
    else:
        job.con.register("json_lines", pa.table({"line": pa.array(job.guard.context, pa.string())}))
        job.con.execute(_NUMBERED_BUNDLES_SQL)
    loc_prefix = "line " if line_format else "record "
    quantiles = quantile_reason_clauses("p20", "p50", "p80")
    observed_at_text = observed_at_text_sql("observed_at")
    future = future_timestamp_clause("observed_at")
    nul = nul_character_clause(("benchmark", "external_id", "liger_version", "run_name"))
    bad_version = bad_version_clause("is_version(liger_version)")
    # The output path is a parameter (duck.write_parquet): no path is ever pasted into SQL.
    duck.write_parquet(
        job.con,
        f"""
        with {_PARSED_SQL},
        judged as (
            select *,
                case
                    when deep then '{Reason.JSON_TOO_DEEP}'
                    when not ok then '{Reason.TRUNCATED_JSON}'
                    when top_type <> 'OBJECT' then '{Reason.NOT_AN_OBJECT}'
                    when {_DUPLICATE_KEYS_SQL} then '{Reason.DUPLICATE_KEY}'
                    {nul}
                    when run_api is distinct from $api or protocol_api is distinct from $api
                         or environment_api is distinct from $api then '{Reason.UNKNOWN_API_VERSION}'
                    when protocol_error is not null then protocol_error
                    when environment_error is not null then environment_error
                    when run_kind is distinct from $run_kind or {_PATTERNS_BROKEN_SQL}
                        then '{Reason.INVALID_RECORD}'
                    when observed_at is null then '{Reason.BAD_TIMESTAMP}'
                    {bad_version}
                    {future}
                    {quantiles}
                    when {_NON_FINITE_SQL} then '{Reason.NON_NUMERIC_VALUE}'
                    when run_digest is null then '{Reason.INVALID_RECORD}'
                    when protocol_actual <> protocol_digest or environment_actual <> environment_digest
                         then '{Reason.DIGEST_MISMATCH}'
                end as reason
            from joined
        )
        select record_no, '{loc_prefix}' || record_no as location, reason,
            case when reason is not null then left(line, {RAW_PREVIEW_CHARS}) end as raw,
            bench_parts[1] as kernel_name,
            bench_parts[2] as kernel_operation_mode,
            case when len(id_parts) >= 3 then id_parts[3] end as kernel_provider,
            case when len(id_parts) >= 4 then id_parts[4] end as gpu_slug,
            trim(concat_ws(' ', json_extract_string(environment_json, '$.spec.hardware.product'),
                                json_extract_string(environment_json, '$.spec.hardware.formFactor')))
                                as environment_gpu_name,
            observed_at,
            {observed_at_text} as observed_at_text,
            liger_version, run_name, p20, p50, p80,
            protocol_digest, environment_digest, workload_digest, implementation_digest,
            protocol_json, environment_json, run_digest, external_id
        from judged
        """,
        {
            "path": str(job.path),
            "max_line": MAX_LINE_BYTES,
            "paths": [*EXTRACTED.values(), "$.protocol", "$.environment", "$.run"],
            "protocol_at": len(EXTRACTED) + 1,
            "environment_at": len(EXTRACTED) + 2,
            "run_at": len(EXTRACTED) + 3,
            "limit": MAX_JSON_DEPTH,
            "api": API_VERSION,
            "run_kind": RUN_KIND,
            "run_slot_paths": _RUN_SLOT_PATHS,
            "run_shape_paths": list(ki_sql.RUN_SHAPE),
            "run_shape": list(ki_sql.RUN_SHAPE.values()),
            "run_top_keys": [list(k) for k in ki_sql.RUN_TOP_KEYS],
            "duplicate_marker": json.dumps(DUPLICATE_MARKER)[1:-1],
            **{f"{col}_re": regex for col, regex in RUN_PATTERNS.items()},
        },
        job.tmp,
    )


def _rejects(job: driver.Job) -> list[driver.Reject]:
    """Lines DuckDB refused or the pre-scan cut out (whatever DuckDB rejects in a one-column read is a
    line that is not whole JSON). Rows after a rejected line move down by the lines rejected before them."""
    if job.guard.scan is None:
        return []
    rejects, lines = driver.parser_rejects(
        job, "line_rejects", DUCKDB_LINE_REJECT_REASON, Reason.TRUNCATED_JSON, strip_newlines=False
    )
    if lines:  # rare
        job.tmp = _shift_records(job.con, job.tmp, job.dest, sorted(lines))
    return rejects


STAGED_SCHEMA = pa.schema(
    [("record_no", pa.int64())]
    + [(c, pa.string()) for c in ("location", "reason", "raw", "kernel_name", "kernel_operation_mode")]
    + [(c, pa.string()) for c in ("kernel_provider", "gpu_slug", "environment_gpu_name")]
    + [("observed_at", pa.timestamp("us"))]
    + [(c, pa.string()) for c in ("observed_at_text", "liger_version", "run_name")]
    + [(c, pa.float64()) for c in ("p20", "p50", "p80")]
    + [(c, pa.string()) for c in ("protocol_digest", "environment_digest", "workload_digest")]
    + [(c, pa.string()) for c in ("implementation_digest", "protocol_json", "environment_json")]
    + [(c, pa.string()) for c in ("run_digest", "external_id")]
)
READER = driver.Reader(schema=STAGED_SCHEMA, register=register_functions, guard=_guard, parse=_parse, rejects=_rejects)


def stage_kernelindex_file(path: Path, dest: Path) -> None:
    """Parse ``path`` and write the staged Parquet ``dest`` atomically, on a database of its own (the
    staging store stages a batch on one database: :func:`driver.stage_or_quarantine`)."""
    driver.stage(READER, path, dest)


def _object_checker(model: type) -> DistinctMap:
    """An arrow UDF: each distinct object text checked once (and remembered)."""
    return DistinctMap(lambda t: dict(zip(CHECKED.names, _check_object(t, model), strict=True)), CHECKED)


def _too_deep(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pa.array([t is not None and json_depth(t) > MAX_JSON_DEPTH for t in texts.to_pylist()], pa.bool_())


def _shift_records(con: duckdb.DuckDBPyConnection, staged: Path, dest: Path, gaps: list[int]) -> Path:
    """Every line yields a row (blank ones as NULL) except rejected ones: the k-th row is physical
    line k + (number of rejected lines r_i with r_i - i < k). Rewrites ``staged`` (removed) with those numbers."""
    befores = [g - i for i, g in enumerate(gaps, 1)]
    cumulative = {b: n for n, b in enumerate(befores, 1)}  # entries with before <= b
    con.register(
        "gaps",
        pa.table(
            {"before": pa.array(list(cumulative), pa.int64()), "shift": pa.array(list(cumulative.values()), pa.int64())}
        ),
    )
    out = atomic_path(dest)
    duck.write_parquet(
        con,
        """
        select s.* replace (s.record_no + coalesce(g.shift, 0) as record_no,
                            'line ' || (s.record_no + coalesce(g.shift, 0)) as location)
        from read_parquet($staged) s asof left join gaps g on s.record_no > g.before
        """,
        {"staged": str(staged)},
        out,
    )
    con.unregister("gaps")
    staged.unlink()
    return out
