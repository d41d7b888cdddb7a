"""Quarantine reason codes. One code per way input can be wrong; documented in docs/guarantees.md."""

from enum import StrEnum

RAW_PREVIEW_CHARS = 4096  # raw text kept in quarantine is capped: a 1 GB line must not land in memory twice


class Reason(StrEnum):
    # whole file
    UNREADABLE_FILE = "unreadable_file"  # refused whole by the parser, or not a regular file (a loop, a FIFO)
    MISSING_REQUIRED_COLUMN = "missing_required_column"
    HEADER_TOO_WIDE = "header_too_wide"
    FILE_TOO_LARGE = "file_too_large"
    DUPLICATE_COLUMN = "duplicate_column"  # a column the reader reads is named twice in the header
    # CSV structure (per line)
    UNREADABLE_BYTES = "unreadable_bytes"  # not UTF-8
    SHORT_ROW = "short_row"
    LONG_ROW = "long_row"
    LINE_TOO_LONG = "line_too_long"
    MALFORMED_CSV = "malformed_csv"  # e.g. unterminated quote
    # CSV values (per row)
    EMPTY_FIELD = "empty_field"
    NON_NUMERIC_VALUE = "non_numeric_value"  # also NaN and infinity
    NON_POSITIVE_VALUE = "non_positive_value"
    QUANTILE_ORDER = "quantile_order"  # p20 <= p50 <= p80 broken
    BAD_CONFIG_JSON = "bad_config_json"
    BAD_TIMESTAMP = "bad_timestamp"
    FUTURE_TIMESTAMP = "future_timestamp"  # more than a day after the wall clock when staged
    AFTER_FILE_COMMIT = "after_file_commit"  # more than a day after the commit that holds the file
    UNKNOWN_UNIT = "unknown_unit"  # metric_unit outside contracts/rules.py UNITS
    NUL_CHARACTER = "nul_character"  # a name or version holds U+0000 (C strings and PostgreSQL end text there)
    BAD_VERSION = "bad_version"  # liger_version is not a PEP 440 version: it could be ordered nowhere
    # kernelindex bundles (per record)
    TRUNCATED_JSON = "truncated_json"
    NOT_AN_OBJECT = "not_an_object"
    JSON_TOO_DEEP = "json_too_deep"
    UNKNOWN_API_VERSION = "unknown_api_version"
    INVALID_RECORD = "invalid_record"  # schema violation
    DIGEST_MISMATCH = "digest_mismatch"
    DUPLICATE_KEY = "duplicate_key"  # an object names a key twice (parsers disagree on which wins)


# DuckDB reject-store error types that mean the same for every line-based input (CSV, NDJSON).
DUCKDB_LINE_REJECT_REASON = {
    "INVALID ENCODING": Reason.UNREADABLE_BYTES,
    "INVALID UNICODE": Reason.UNREADABLE_BYTES,
    "LINE SIZE OVER MAXIMUM": Reason.LINE_TOO_LONG,
}
# CSV rows also have a field count to get wrong.
DUCKDB_REJECT_REASON = {
    **DUCKDB_LINE_REJECT_REASON,
    "MISSING COLUMNS": Reason.SHORT_ROW,
    "TOO MANY COLUMNS": Reason.LONG_ROW,
}
