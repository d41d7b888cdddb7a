"""KernelIndex's run text in DuckDB SQL: the staging readers write a row's run digest in the query.

The run text of pipeline/contracts/kernelindex/run_text.py (`RUN_TEXT`, one template for every writer) filled
by SQL, for the rows whose numbers SQL writes exactly as ECMAScript does: every quantile a plain decimal (no
whitespace, hex or Infinity), finite, and each written without an exponent (DuckDB prints a double as Python's
`repr` does; where that has no exponent it is ECMAScript's text too). Any other row is `row_run_digest`'s, in
Python: `run_sql_is_exact` says which. Used by the CSV reader (a row's run) and the kernelindex reader (a
record's run, where it has the shape `RUN_SHAPE` describes).
"""

from __future__ import annotations

import string
from collections.abc import Mapping

from pipeline.contracts.kernelindex.ecmascript import MAX_SAFE_INTEGER
from pipeline.contracts.kernelindex.run_text import (
    CSV_RUN_CONSTANTS,
    LATENCY,
    MEASUREMENT_TEXT,
    MEASUREMENTS_TEXT,
    METRICS_TEXT,
    RUN_SPEC_KEYS,
    RUN_TEXT,
    json_string,
)

_JS_PLAIN_DECIMAL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"


def js_number_sql(text: str) -> str:
    """`Number(text)` for a plain decimal (both parse correctly rounded), else NULL."""
    return f"case when regexp_full_match({text}, '{_JS_PLAIN_DECIMAL}') then try_cast({text} as double) end"


def js_round_sql(x: str) -> str:
    """`Math.round`, as `js_round` computes it (x - floor(x) is exact for a finite double)."""
    return f"(case when {x} - floor({x}) >= 0.5 then floor({x}) + 1 else floor({x}) end)"


def js_value_text_sql(x: str) -> str:
    """`_num(js_value(x))` for a finite |x| <= 2^53 - 1 whose text has no exponent (`run_sql_is_exact`)."""
    integral = f"{x} = trunc({x}) and abs({x}) <= {MAX_SAFE_INTEGER}"
    return f"(case when {integral} then cast(cast({x} as bigint) as varchar) else cast({x} as varchar) end)"


def run_sql_is_exact(ms20: str, ms50: str, ms80: str, ns20: str, ns50: str, ns80: str, texts: str) -> str:
    """True where `run_text_sql` writes the row's run as `row_run_digest` does (NULL counts as false)."""
    finite = " and ".join(f"isfinite({v})" for v in (ms20, ms50, ms80))
    safe = " and ".join(f"abs({v}) <= {MAX_SAFE_INTEGER}" for v in (ms20, ms50, ms80, ns20, ns50, ns80))
    return f"({finite} and {ms50} > 0 and {safe} and not contains({texts}, 'e'))"


def csv_timestamp_sql(text: str) -> tuple[str, str]:
    """(parsed, kebab text) in SQL for upstream's own `YYYY-MM-DD HH:MM:SS`, a real date and time of years
    1000-9999 (`parsed` NULL otherwise): there `kebab` only turns the separators into "-"."""
    parsed = (
        f"case when regexp_full_match({text}, '[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}')"
        f" and {text} >= '1000' then try_strptime({text}, '%Y-%m-%d %H:%M:%S') end"
    )
    return parsed, f"replace(replace({text}, ' ', '-'), ':', '-')"


def observed_at_json_sql(parsed: str) -> str:
    """`json_string(observed_at_of(timestamp))` for a timestamp `csv_timestamp_sql` parsed: the same instant,
    `.000Z`."""
    return f"""strftime({parsed}, '"%Y-%m-%dT%H:%M:%S.000Z"')"""


# A template's text in SQL: (True, literal text) and (False, SQL expression) pieces, in order.
_Pieces = list[tuple[bool, str]]


def _template_pieces(template: str, slots: Mapping[str, str | _Pieces]) -> _Pieces:
    """A `str.format` template's pieces: its text as literals, its fields as `slots`' expressions or pieces."""
    pieces: _Pieces = []
    for literal, name, _, _ in string.Formatter().parse(template):
        if literal:
            pieces.append((True, literal))
        if name is not None:
            value = slots[name]
            pieces.extend(value if isinstance(value, list) else [(False, value)])
    return pieces


def _sql_concat(pieces: _Pieces) -> str:
    """The pieces joined by one `concat` (adjacent literals as one), NULL where an expression is, as `||`
    would be: a chain of `||` copies the growing text once a piece, 20× the cost over a run's 60 pieces."""
    merged: _Pieces = []
    for literal, text in pieces:
        if literal and merged and merged[-1][0]:
            merged[-1] = (True, merged[-1][1] + text)
        else:
            merged.append((literal, text))
    body = "concat(" + ", ".join(_sql_literal(t) if literal else t for literal, t in merged) + ")"
    nullable = [t for literal, t in merged if not literal]
    if not nullable:
        return body
    return "(case when " + " and ".join(f"({t}) is not null" for t in nullable) + f" then {body} end)"


# A run object's keys where `run_text_sql` writes it (JSON path in the run -> its keys, sorted), and where
# its slots are (slot -> JSON path): a record whose run has this shape is hashed in SQL.
RUN_SHAPE = {
    "$.spec": sorted(RUN_SPEC_KEYS),
    "$.spec.sourceNative": ["benchmark", "externalId", "metrics", "source"],
    "$.spec.sourceNative.metrics": ["ms_20", "ms_50", "ms_80"],
    "$.spec.timing": ["latencyNs", "primaryStatistic"],
    "$.spec.timing.latencyNs": ["median"],
    "$.spec.measurements[0]": ["metric", "statistic", "unit", "value"],
    "$.spec.measurements[1]": ["metric", "statistic", "unit", "value"],
}
RUN_TOP_KEYS = (["apiVersion", "kind", "metadata", "spec"], ["apiVersion", "kind", "spec"])
RUN_STRING_SLOTS = {
    "api_version": "$.apiVersion",
    "kind": "$.kind",
    "environment": "$.spec.environmentDigest",
    "implementation": "$.spec.implementationDigest",
    "observed": "$.spec.observedAt",
    "protocol": "$.spec.protocolDigest",
    "benchmark": "$.spec.sourceNative.benchmark",
    "external_id": "$.spec.sourceNative.externalId",
    "source": "$.spec.sourceNative.source",
    "status": "$.spec.status",
    "primary_statistic": "$.spec.timing.primaryStatistic",
    "workload": "$.spec.workloadDigest",
}
RUN_NUMBER_SLOTS = {
    "median": "$.spec.timing.latencyNs.median",
    "ms20": "$.spec.sourceNative.metrics.ms_20",
    "ms50": "$.spec.sourceNative.metrics.ms_50",
    "ms80": "$.spec.sourceNative.metrics.ms_80",
    "ns20": "$.spec.measurements[0].value",
    "ns80": "$.spec.measurements[1].value",
}
# The measurement items `run_text_sql` writes, as JSON texts (slot -> path -> text)
RUN_ITEM_TEXTS = {
    f"$.spec.measurements[{i}].{field}": text
    for i, stat in enumerate(("p20", "p80"))
    for field, text in (("metric", LATENCY["metric"]), ("statistic", json_string(stat)), ("unit", LATENCY["unit"]))
}


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def run_text_sql(slots: Mapping[str, str]) -> str:
    """`RUN_TEXT` of a run with p20 and p80, in SQL. `slots`: SQL expressions of JSON texts for the fields of
    `RUN_TEXT` but `measurements` and `metrics` (`CSV_RUN_CONSTANTS` where not given), and for the numbers
    ns20, ns80, ms20, ms50, ms80. NULL where a slot is."""
    constants: dict[str, str | _Pieces] = {k: [(True, v)] for k, v in CSV_RUN_CONSTANTS.items()}
    slots = constants | dict(slots)
    latency: dict[str, str | _Pieces] = {k: [(True, v)] for k, v in LATENCY.items()}
    p20, p80 = (
        _template_pieces(MEASUREMENT_TEXT, latency | {"statistic": [(True, json_string(stat))], "value": slots[value]})
        for stat, value in (("p20", "ns20"), ("p80", "ns80"))
    )
    measurements = _template_pieces(MEASUREMENTS_TEXT, {"items": [*p20, (True, ","), *p80]})
    return _sql_concat(
        _template_pieces(
            RUN_TEXT, slots | {"measurements": measurements, "metrics": _template_pieces(METRICS_TEXT, slots)}
        )
    )
