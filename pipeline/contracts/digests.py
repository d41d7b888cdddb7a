"""The digest rule, in one place.

Objects (every kernelindex kind) are hashed as KernelIndex hashes them:
``"sha256:" + sha256(RFC 8785 canonical JSON of {apiVersion, kind, spec})``, metadata excluded.
RFC 8785 (the `rfc8785` package) writes numbers as ECMAScript does (``1e-6`` -> ``0.000001``,
``25.0`` -> ``25``) and sorts keys by UTF-16 code units; ``json.dumps`` does neither, and gave
other digests. Every canonical form in this project -- objects, and the configs inside the
measurement identity -- is this one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import rfc8785

SHA_PREFIX = "sha256:"
CanonicalizationError = rfc8785.CanonicalizationError


def canonical_json(value: Any) -> str:
    """The project's one canonical JSON: RFC 8785 (JCS) text. Raises `CanonicalizationError` (a ValueError)
    for NaN, Infinity, integers beyond 2**53 (which JSON cannot carry exactly) and lone surrogates (so the
    text is always valid UTF-8, and its UTF-8 bytes are the RFC 8785 bytes)."""
    return rfc8785.dumps(value).decode("utf-8")


def object_digest(obj: Mapping[str, Any]) -> str:
    """The project's one object digest: of a kernelindex object (run/protocol/environment/...), as
    KernelIndex's `specDigest` (identity/digest.ts) computes it; metadata is not part of it."""
    body = canonical_json({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "spec": obj["spec"]})
    return SHA_PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest()


# Identity of a measurement (ours: the fact key). What was run, where and when -- and what it measured:
# the three quantiles as text (DuckDB's shortest round-trip form of the double, Python's repr) and the
# occurrence, the ordinal of a row among the rows of its file identical in every field. So two runs stamped
# in the same second with other values are two measurements, and re-sightings of one file's content map to
# the same facts. Null fields are written as U+0000 so they never collide with "".
MEASUREMENT_KEY = (
    "kernel_name",
    "kernel_provider",
    "kernel_operation_mode",
    "metric_name",
    "x_name",
    "x_value",
    "extra_config",
    "gpu_name",
    "observed_at_text",
    "liger_version",
    "p20",
    "p50",
    "p80",
    "occurrence",
)


def measurement_digest_sql() -> str:
    """DuckDB expression for the measurement digest (vectorized; no Python per row).

    sha256 over the key fields as text joined by U+001F; ``observed_at_text`` is the UTC
    timestamp as ``YYYY-MM-DD HH:MM:SS``; the quantiles are doubles, printed by DuckDB.
    """
    parts = ", ".join(f"coalesce(({c})::varchar, chr(0))" for c in MEASUREMENT_KEY)
    return f"'{SHA_PREFIX}' || sha256(concat_ws(chr(31), {parts}))"


def _text(value: object) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def measurement_digest(**fields: object) -> str:
    """Python twin of :func:`measurement_digest_sql`, for tests and single records (floats as repr(),
    which is DuckDB's double -> varchar)."""
    text = chr(31).join(chr(0) if fields.get(c) is None else _text(fields[c]) for c in MEASUREMENT_KEY)
    return SHA_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


# A record that folds into no CSV row has no config, only its workload's digest. That digest takes
# the config's place in the identity, so two records of one sweep observed in the same second stay
# two measurements; it can never equal a CSV config, which is a JSON object.
RECORD_ONLY_CONFIG_PREFIX = "workload:"


def record_only_extra_config_sql(workload_digest_column: str = "workload_digest") -> str:
    """DuckDB expression for the config slot of a record-only measurement's identity."""
    return f"'{RECORD_ONLY_CONFIG_PREFIX}' || {workload_digest_column}"


def record_only_measurement_digest(workload_digest: str, **fields: object) -> str:
    """Python twin for a record-only measurement: the workload digest stands in for the config."""
    return measurement_digest(**{**fields, "extra_config": RECORD_ONLY_CONFIG_PREFIX + workload_digest})
