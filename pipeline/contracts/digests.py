"""The digest rule, in one place.

Objects (protocol, environment, workload, implementation) are hashed as
``"sha256:" + sha256(json.dumps({apiVersion, kind, spec}, sort_keys=True,
separators=(",", ":"), ensure_ascii=False).encode())`` -- metadata excluded.

Floats are serialized the way Python's ``json.dumps`` does (``repr``: the shortest
string that round-trips, e.g. ``5.2e-05``). orjson would write ``5.2e-5`` and yield a
different digest, so every digest in this project goes through :func:`canonical_json`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SHA_PREFIX = "sha256:"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_text(text: str) -> str:
    return SHA_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


def object_digest(obj: dict[str, Any]) -> str:
    """Digest of a kernelindex object (run/protocol/environment/...): metadata is not part of it."""
    return sha256_text(canonical_json({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "spec": obj["spec"]}))


# Identity of a measurement. Null fields are written as U+0000 so they never collide with "".
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
)


def measurement_digest_sql() -> str:
    """DuckDB expression for the measurement digest (vectorized; no Python per row).

    sha256 over the key fields joined by U+001F; ``observed_at_text`` is the UTC
    timestamp as ``YYYY-MM-DD HH:MM:SS``.
    """
    parts = ", ".join(f"coalesce({c}, chr(0))" for c in MEASUREMENT_KEY)
    return f"'{SHA_PREFIX}' || sha256(concat_ws(chr(31), {parts}))"


def measurement_digest(**fields: str | None) -> str:
    """Python twin of :func:`measurement_digest_sql`, for tests and single records."""
    text = chr(31).join(chr(0) if fields.get(c) is None else str(fields[c]) for c in MEASUREMENT_KEY)
    return SHA_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()


# A record that folds into no CSV row has no config, only its workload's digest. That digest takes
# the config's place in the identity, so two records of one sweep observed in the same second stay
# two measurements; it can never equal a CSV config, which is a JSON object.
RECORD_ONLY_CONFIG_PREFIX = "workload:"


def record_only_extra_config_sql(workload_digest_column: str = "workload_digest") -> str:
    """DuckDB expression for the config slot of a record-only measurement's identity."""
    return f"'{RECORD_ONLY_CONFIG_PREFIX}' || {workload_digest_column}"


def record_only_measurement_digest(workload_digest: str, **fields: str | None) -> str:
    """Python twin for a record-only measurement: the workload digest stands in for the config."""
    return measurement_digest(**{**fields, "extra_config": RECORD_ONLY_CONFIG_PREFIX + workload_digest})
