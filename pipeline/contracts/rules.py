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


# ----------------------------------------------------------------------------------------------------------------
# which kernels a commit touches
KERNEL_ROOT = "src/liger_kernel/"

# THE rule deciding whether a source file belongs to a kernel. Paths are relative to src/liger_kernel/.
# 1. SHARED_FILES count for every kernel.
# 2. A file whose stem (name without .py), split on "_", is a contiguous run of the kernel name's tokens:
#    ops/rms_norm.py -> rms_norm, fused_add_rms_norm; chunked_loss/cpo_loss.py -> fused_linear_cpo_loss;
#    ops/cross_entropy.py -> cross_entropy, fused_linear_cross_entropy. Any folder: ops/, transformers/,
#    chunked_loss/, ops/experimental/, ops/cutile/... The kernel name is lower-cased and loses a config
#    suffix "_<key>=<value>" (dyt_beta=False -> dyt).
#    Except OTHER_DEVICE_BACKENDS: upstream's ops/backends/ holds "operator implementations for devices other
#    than the default (CUDA)" (Ascend NPU), which never run on the NVIDIA GPUs its benchmarks measure; the
#    v0.7.0-era NPU commits otherwise read as code changes of softmax, rms_norm, layer_norm (issue 42).
# 3. FAMILY_FILES: the base classes of chunked losses count for every kernel whose name has the token "loss".
# 4. KERNEL_ALIASES: kernels implemented in a file whose name is not theirs.
# Over-inclusive on purpose (a suspect list, not a verdict): ops/jsd.py also counts for distill_jsd_loss.
SHARED_FILES = frozenset({"ops/utils.py", "utils.py"})
OTHER_DEVICE_BACKENDS = "ops/backends/"
FAMILY_FILES = {
    "loss": frozenset(
        {
            "chunked_loss/fused_linear_preference.py",
            "chunked_loss/fused_linear_distillation.py",
            "chunked_loss/fused_linear_ppo.py",
            "chunked_loss/fused_linear_unpaired_preference.py",
        }
    ),
}
KERNEL_ALIASES = {
    "tiled_geglu": ("tiled_mlp",),
    "tiled_swiglu": ("tiled_mlp",),
    "distill_cosine_loss": ("cosine_similarity_loss",),
}


def kernel_tokens(kernel_name: str) -> tuple[str, ...]:
    name = kernel_name.strip().lower()
    name = re.sub(r"_[a-z0-9]+=.*$", "", name)
    return tuple(t for t in re.split(r"[^a-z0-9]+", name) if t)


def _contains_run(tokens: tuple[str, ...], run: tuple[str, ...]) -> bool:
    n = len(run)
    return n > 0 and any(tokens[i : i + n] == run for i in range(len(tokens) - n + 1))


def touches_kernel(paths: Iterable[str], kernel_name: str) -> bool:
    """Whether any of ``paths`` (repository paths) is source of ``kernel_name`` under the rule above."""
    tokens = kernel_tokens(kernel_name)
    if not tokens:
        return False
    name = "_".join(tokens)
    stems = {tuple(a.split("_")) for a in KERNEL_ALIASES.get(name, ())}
    families = [files for token, files in FAMILY_FILES.items() if token in tokens]
    for path in paths:
        if not path.startswith(KERNEL_ROOT):
            continue
        rel = path[len(KERNEL_ROOT) :]
        if rel.startswith(OTHER_DEVICE_BACKENDS):
            continue
        if rel in SHARED_FILES or any(rel in files for files in families):
            return True
        if not rel.endswith(".py"):
            continue
        stem = tuple(t for t in rel.rsplit("/", 1)[-1][:-3].lower().split("_") if t)
        if stem in stems or _contains_run(tokens, stem):
            return True
    return False
