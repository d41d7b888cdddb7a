"""Rules more than one stage applies, each written once: the readers, the models and the checks all
take them from here (as Python, as SQL text, or as a DuckDB macro built from that text)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.version import InvalidVersion, Version

from pipeline.contracts.reasons import Reason

# -- quantiles -------------------------------------------------------------------------------------
QUANTILES = ("p20", "p50", "p80")


def quantile_reason_clauses(p20: str, p50: str, p80: str) -> str:
    """`when ... then '<reason>'` clauses of a CASE: why three quantiles are not a measurement (finite,
    positive, ordered p20 <= p50 <= p80), first failed rule first. A null quantile is non-numeric."""
    ps = (p20, p50, p80)
    non_numeric = " or ".join([f"{p} is null" for p in ps] + [f"isnan({p})" for p in ps] + [f"isinf({p})" for p in ps])
    return (
        f"when {non_numeric} then '{Reason.NON_NUMERIC_VALUE}' "
        f"when {' or '.join(f'{p} <= 0' for p in ps)} then '{Reason.NON_POSITIVE_VALUE}' "
        f"when not ({p20} <= {p50} and {p50} <= {p80}) then '{Reason.QUANTILE_ORDER}'"
    )


# `quantile_reason(p20, p50, p80)`: the reason code, or NULL for valid quantiles (the check connection's macro).
QUANTILE_REASON_MACRO = (
    f"create or replace temp macro quantile_reason(p20, p50, p80) as "
    f"case {quantile_reason_clauses('p20', 'p50', 'p80')} end"
)


# -- names and versions ----------------------------------------------------------------------------------
def nul_character_clause(columns: Iterable[str]) -> str:
    """`when ... then 'nul_character'`: a NUL (U+0000) in any of ``columns`` (SQL expressions; NULL is
    empty). C strings, PostgreSQL and most tools end the text there, so the name shown is not the name kept."""
    return f"when contains(concat({', '.join(columns)}), chr(0)) then '{Reason.NUL_CHARACTER}'"


def parse_version(text: str | None) -> Version | None:
    """The PEP 440 version ``text`` spells (surrounding whitespace aside), or None: versions order by
    PEP 440 only (serve/versions.py ranks them), so text that is not one could be ordered nowhere."""
    stripped = (text or "").strip()
    if not stripped:
        return None
    try:
        return Version(stripped)
    except InvalidVersion:
        return None


def is_version(text: str) -> bool:
    return parse_version(text) is not None


def bad_version_clause(is_valid: str) -> str:
    """`when ... then 'bad_version'`: ``is_valid`` is SQL for `is_version` of the row's version (NULL
    for a missing one, which this clause leaves to the others)."""
    return f"when not {is_valid} then '{Reason.BAD_VERSION}'"


# -- units ---------------------------------------------------------------------------------------------
# Every metric_unit a CSV may carry -> (the unit it is stored in, the factor to it). Only exact
# conversions: time to ms (decimal), memory to MB (Liger's MB is 2^20 bytes, so KB/GB are binary
# too). Anything else is quarantined as unknown_unit, so a unit switch never reads as a x1000 change.
UNITS: dict[str, tuple[str, int, int]] = {  # unit -> (stored unit, multiply by, divide by)
    "ms": ("ms", 1, 1),
    "ns": ("ms", 1, 1_000_000),
    "us": ("ms", 1, 1000),
    "µs": ("ms", 1, 1000),  # MICRO SIGN
    "μs": ("ms", 1, 1000),  # GREEK SMALL LETTER MU
    "s": ("ms", 1000, 1),
    "MB": ("MB", 1, 1),
    "KB": ("MB", 1, 1024),
    "GB": ("MB", 1024, 1),
}


def unit_sql(column: str) -> str:
    """The stored unit of ``column``'s unit as a SQL CASE; NULL for a unit outside UNITS."""
    return "case " + column + " " + " ".join(f"when '{u}' then '{to}'" for u, (to, _, _) in UNITS.items()) + " end"


def convert_sql(value: str, unit_column: str) -> str:
    """``value`` in its stored unit: multiplied, then divided, by integers (one rounding each)."""
    mul = " ".join(f"when '{u}' then {m}" for u, (_, m, _) in UNITS.items())
    div = " ".join(f"when '{u}' then {d}" for u, (_, _, d) in UNITS.items())
    return f"({value} * (case {unit_column} {mul} end)::double / (case {unit_column} {div} end)::double)"


# -- timestamps: not in the future, not after the file's commit -----------------------------------------
# Upstream's harness writes local time without a zone (`time.strftime`), read as UTC: a machine east
# of UTC writes stamps up to 14 h ahead of the true instant, and clocks drift. A day covers both.
CLOCK_SLACK = "interval 1 day"


def future_timestamp_clause(column: str) -> str:
    """`when ... then 'future_timestamp'`: a (UTC, naive) timestamp more than a day after the wall clock."""
    return f"when {column} > timezone('UTC', get_current_timestamp()) + {CLOCK_SLACK} then '{Reason.FUTURE_TIMESTAMP}'"


def after_file_commit_clause(observed_at: str, committed_at: str) -> str:
    """`when ... then 'after_file_commit'`: a row timestamped more than a day after the commit that
    holds its file (both UTC, naive) cannot be real: the file was committed before the run happened.
    A file without a commit (NULL ``committed_at``) is never judged by it. The committer date is the
    bound, not the author date: an amended or rebased commit may hold data newer than its author date."""
    return f"when {observed_at} > {committed_at} + {CLOCK_SLACK} then '{Reason.AFTER_FILE_COMMIT}'"


# -- GPU slug: a record's externalId names its GPU by the slug of a CSV gpu_name -----------------------
SLUG_PATTERN = "[^a-z0-9]+"
_SLUG_RE = re.compile(SLUG_PATTERN)


def slug(text: str) -> str:
    return _SLUG_RE.sub("-", text.lower()).strip("-")


# `slug(text)` in SQL, the same rule (RE2 and Python agree on this character class).
SLUG_MACRO = f"create or replace temp macro slug(t) as trim(regexp_replace(lower(t), '{SLUG_PATTERN}', '-', 'g'), '-')"

# -- timestamps ----------------------------------------------------------------------------------------
# A measurement's time to the second, as it enters its digest and the fold (UTC).
OBSERVED_AT_TEXT_FORMAT = "%Y-%m-%d %H:%M:%S"


def observed_at_text_sql(column: str) -> str:
    return f"strftime({column}, '{OBSERVED_AT_TEXT_FORMAT}')"


# -- the record fold ---------------------------------------------------------------------------------------
# How a kernelindex record becomes the twin of a CSV fact, best rule first (sql/model/fold.sql applies
# them to a batch; the merge asks the same of the facts committed earlier).
FOLD_RULES = ("run digest", "externalId", "heuristic")


def fold_heuristic_sql(fact: str = "f", record: str = "r") -> str:
    """THE heuristic fold, for a record that matches no row by run digest or externalId: kernel, pass,
    provider, GPU and the time to the second agree, and so do the three quantiles (relative 1e-9,
    ms rows only)."""
    f, r = fact, record
    quantiles = " and ".join(f"abs({f}.{q} - {r}.{q}) <= 1e-9 * {r}.{q}" for q in ("p20", "p50", "p80"))
    return (
        f"{f}.kernel_name = {r}.kernel_name and {f}.kernel_operation_mode = {r}.kernel_operation_mode"
        f" and {f}.kernel_provider is not distinct from {r}.kernel_provider and {f}.gpu_name = {r}.gpu_name"
        f" and date_trunc('second', {f}.observed_at) = date_trunc('second', {r}.observed_at)"
        f" and {f}.metric_unit = 'ms' and {quantiles}"
    )


# -- kernelindex records ----------------------------------------------------------------------------------
# What makes two record rows one record: the fold picks one fact per record by it, and the merge
# appends a record the warehouse does not hold by it.
RECORD_KEY = (
    "kernel_name",
    "kernel_operation_mode",
    "kernel_provider",
    "gpu_name",
    "observed_at_text",
    "p20",
    "p50",
    "p80",
    "protocol_digest",
    "environment_digest",
    "workload_digest",
    "implementation_digest",
    "run_digest",
)
