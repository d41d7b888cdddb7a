"""A run's digest, fast: its RFC 8785 text written from one template (`RUN_TEXT`) rather than by a general JSON
canonicalizer, for a run object (`run_digest`) and straight from a CSV row's strings (`row_run_digest`).

The digest is `canonicalIdentityJson` + `specDigest` of `apps/web/src/server/identity/digest.ts` of
github.com/SamMausberg/KernelIndex at e6c5a71 (a reading copy: ../shared/reference/kernelindex, relative to the
checkout). The text here equals `canonical_json` of the run's `{apiVersion, kind, spec}` (contracts/digests.py), which
the golden tests check on every shipped row. The same template is written in DuckDB SQL by
pipeline/stage/kernelindex_sql.py.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from pipeline.contracts.digests import canonical_json, object_digest
from pipeline.contracts.kernelindex.ecmascript import MAX_SAFE_INTEGER, js_number, js_round, js_value, ms_to_ns
from pipeline.contracts.kernelindex.identity import Identity
from pipeline.contracts.kernelindex.liger_types import API_VERSION, SOURCE_SLUG
from pipeline.contracts.kernelindex.run import external_id_of, run_manifest
from pipeline.contracts.kernelindex.shared import kebab, to_utc_instant

RUN_SPEC_KEYS = frozenset(
    (
        "environmentDigest",
        "implementationDigest",
        "measurements",
        "observedAt",
        "protocolDigest",
        "sourceNative",
        "status",
        "timing",
        "workloadDigest",
    )
)


def _num(x: Any) -> str:
    """RFC 8785 number text, fast for what a run holds: safe integers, and doubles whose `repr` has no exponent
    (then it is ECMAScript's shortest round-trip text too); anything else through `rfc8785`."""
    if type(x) is int and -MAX_SAFE_INTEGER <= x <= MAX_SAFE_INTEGER:
        return str(x)
    if type(x) is float:
        text = repr(x)
        if "e" not in text and "n" not in text and not text.endswith(".0"):
            return text
    return canonical_json(x)


# A string's RFC 8785 text: RFC 8785 escapes strings as JSON.stringify does (json.dumps without ensure_ascii).
json_string = encode_basestring


def _run_text(run: Mapping[str, Any]) -> str | None:
    """The RFC 8785 text of `{apiVersion, kind, spec}` of a run `build_run` made (keys written in sorted order),
    or None when the run has another shape."""
    spec = run["spec"]
    if spec.keys() - {"measurements"} != RUN_SPEC_KEYS - {"measurements"}:
        return None
    native, timing = spec["sourceNative"], spec["timing"]
    if native.keys() != {"benchmark", "externalId", "metrics", "source"} or timing.keys() != {
        "latencyNs",
        "primaryStatistic",
    }:
        return None
    if timing["latencyNs"].keys() != {"median"} or not all(k.isascii() for k in native["metrics"]):
        return None  # RFC 8785 sorts keys by UTF-16 code units: Python's order is that one for ASCII
    metrics = ",".join(f"{json_string(k)}:{_num(v)}" for k, v in sorted(native["metrics"].items()))
    items = []
    for m in spec.get("measurements", ()):
        if m.keys() != {"metric", "unit", "statistic", "value"}:
            return None
        items.append(
            MEASUREMENT_TEXT.format(
                metric=json_string(m["metric"]),
                statistic=json_string(m["statistic"]),
                unit=json_string(m["unit"]),
                value=_num(m["value"]),
            )
        )
    return RUN_TEXT.format(
        api_version=json_string(run["apiVersion"]),
        kind=json_string(run["kind"]),
        environment=json_string(spec["environmentDigest"]),
        implementation=json_string(spec["implementationDigest"]),
        measurements=measurements_text(items) if "measurements" in spec else "",
        observed=json_string(spec["observedAt"]),
        protocol=json_string(spec["protocolDigest"]),
        benchmark=json_string(native["benchmark"]),
        external_id=json_string(native["externalId"]),
        metrics=metrics,
        source=json_string(native["source"]),
        status=json_string(spec["status"]),
        median=_num(timing["latencyNs"]["median"]),
        primary_statistic=json_string(timing["primaryStatistic"]),
        workload=json_string(spec["workloadDigest"]),
    )


def run_digest(run: Mapping[str, Any]) -> str:
    """`object_digest` of a run, fast (it is the per-row cost of mapping a CSV, and of reading a record): the
    run's RFC 8785 text written directly (`_run_text`); a run of another shape, or text that is not UTF-8 (a lone
    surrogate), goes to the reference `object_digest`. The golden tests check it on every shipped row, and
    tests/unit/stage on records of other shapes."""
    try:
        text = _run_text(run)
        if text is not None:
            return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    except (KeyError, TypeError, AttributeError, UnicodeEncodeError):
        pass
    return object_digest(run)


# The RFC 8785 text of a run of the CSV's shape, keys in sorted order; every slot holds its value's JSON text.
# One template for every writer: `_run_text` (a run object), `row_run_digest` (a CSV row, in Python),
# `run_text_sql` (a CSV row or a record, in DuckDB, where SQL writes the numbers as ECMAScript does).
RUN_TEXT = (
    '{{"apiVersion":{api_version},"kind":{kind},"spec":{{"environmentDigest":{environment},'
    '"implementationDigest":{implementation}{measurements},"observedAt":{observed},"protocolDigest":{protocol},'
    '"sourceNative":{{"benchmark":{benchmark},"externalId":{external_id},"metrics":{{{metrics}}},"source":{source}}},'
    '"status":{status},"timing":{{"latencyNs":{{"median":{median}}},"primaryStatistic":{primary_statistic}}},'
    '"workloadDigest":{workload}}}}}'
)
MEASUREMENT_TEXT = '{{"metric":{metric},"statistic":{statistic},"unit":{unit},"value":{value}}}'
METRICS_TEXT = '"ms_20":{ms20},"ms_50":{ms50},"ms_80":{ms80}'
MEDIAN_ONLY_METRICS_TEXT = '"ms_50":{ms50}'
LATENCY = {"metric": json_string("latency"), "unit": json_string("ns")}
# What every run made from a CSV row says alike
CSV_RUN_CONSTANTS = {
    "api_version": json_string(API_VERSION),
    "kind": json_string("BenchmarkRun"),
    "source": json_string(SOURCE_SLUG),
    "status": json_string("passed"),
    "primary_statistic": json_string("median"),
}


MEASUREMENTS_TEXT = ',"measurements":[{items}]'


def measurements_text(items: list[str]) -> str:
    return MEASUREMENTS_TEXT.format(items=",".join(items))


def csv_measurements_text(ns20: str, ns80: str) -> str:
    return measurements_text(
        [
            MEASUREMENT_TEXT.format(**LATENCY, statistic=json_string("p20"), value=ns20),
            MEASUREMENT_TEXT.format(**LATENCY, statistic=json_string("p80"), value=ns80),
        ]
    )


@dataclass(frozen=True)
class RunFrame:
    """What a row's run text takes from its identity, pass, provider and GPU (not its timestamp or numbers)."""

    slots: dict[str, str]  # RUN_TEXT's slots: the constants, the digests and the benchmark
    external_id_prefix: str  # the externalId up to its timestamp part


@lru_cache(maxsize=1 << 14)  # the rows of one sweep share all of it
def run_frame(identity: Identity, mode: str, provider: str, gpu_name: str) -> RunFrame:
    slots = CSV_RUN_CONSTANTS | {
        "environment": json_string(identity.environment_digest),
        "implementation": json_string(identity.implementation_digest),
        "protocol": json_string(identity.protocol_digest),
        "workload": json_string(identity.workload_digest),
        "benchmark": json_string(f"{identity.kernel}/{mode}"),
    }
    prefix = external_id_of(identity.kernel, mode, provider, gpu_name, identity.case_key, "")
    return RunFrame(slots, prefix)


@lru_cache(maxsize=1 << 14)
def observed_at_of(timestamp: str) -> str:
    """The run's `observedAt` for a CSV timestamp (ValueError where `run_manifest` raises)."""
    return to_utc_instant(timestamp.replace(" ", "T", 1))


def row_run_digest(
    identity: Identity, mode: str, provider: str, gpu_name: str, timestamp: str, y20: str, y50: str, y80: str
) -> tuple[str, str]:
    """(externalId, run digest) of a CSV row: `run_digest(run_manifest(row)[0])` without building the run,
    the per-row cost of mapping a CSV. tests/unit/contracts check it against that reference on every shipped
    row; tests/unit/stage check `run_text_sql` against it."""
    ms50, ms20, ms80 = js_number(y50), js_number(y20), js_number(y80)
    if not math.isfinite(ms50) or ms50 <= 0:
        raise ValueError(f"invalid median '{y50}'")
    median = js_round(ms50 * 1_000_000)
    if median > MAX_SAFE_INTEGER:
        raise ValueError(f"median {y50} ms is not a safe integer of ns")
    frame = run_frame(identity, mode, provider, gpu_name)
    external_id = frame.external_id_prefix + kebab(timestamp)
    observed_at = observed_at_of(timestamp)
    if math.isfinite(ms20) and math.isfinite(ms80):
        measurements = csv_measurements_text(_num(ms_to_ns(ms20)), _num(ms_to_ns(ms80)))
        metrics = METRICS_TEXT.format(ms20=_num(js_value(ms20)), ms50=_num(js_value(ms50)), ms80=_num(js_value(ms80)))
    else:
        measurements, metrics = "", MEDIAN_ONLY_METRICS_TEXT.format(ms50=_num(js_value(ms50)))
    text = RUN_TEXT.format(
        **frame.slots,
        measurements=measurements,
        observed=json_string(observed_at),
        external_id=json_string(external_id),
        metrics=metrics,
        median=_num(js_value(median)),
    )
    try:
        return external_id, "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:  # a lone surrogate: the reference path says what RFC 8785 makes of it
        row = {"kernel_operation_mode": mode, "kernel_provider": provider, "gpu_name": gpu_name, "timestamp": timestamp}
        row |= {"y_value_20": y20, "y_value_50": y50, "y_value_80": y80, "liger_version": ""}
        run, external_id = run_manifest(row, identity, with_metadata=False)
        return external_id, run_digest(run)


def json_string_halves(value: str) -> tuple[str, str]:
    """`json_string(value)` without its closing quote, and without its opening one: escaping is per character, so
    the externalId's JSON text is its prefix's first half and its timestamp part's second."""
    text = json_string(value)
    return text[:-1], text[1:]
