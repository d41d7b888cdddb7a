"""JavaScript semantics KernelIndex's importer relies on, and the digests with it (no upstream file: the ECMAScript
language as V8 runs it): `Number(string)`, `Math.round` (ties up: `2.5 -> 3`, `-2.5 -> -2`, where Python's `round`
rounds to even), numbers printed as `String(x)` does (`0.000001`, `1e+21`, via RFC 8785), and `JSON.parse` (every number
a double: `4096.0` is the integer 4096, `1e21` stays a double).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pipeline.contracts.digests import canonical_json

MAX_SAFE_INTEGER = 2**53 - 1
# ECMAScript StrWhiteSpaceChar: WhiteSpace and LineTerminator (Python's str.strip would also strip \x1c-\x1f).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")
_JS_NONDECIMAL = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)")


def js_number(text: str) -> float:
    """`Number(text)` for a string: "" -> 0, " 12 " -> 12, "0x10" -> 16, "1_0" / "inf" / "nan" -> NaN."""
    s = text.strip(_JS_SPACE)
    if s == "":
        return 0.0
    if _JS_DECIMAL.fullmatch(s):
        return float(s)
    if _JS_NONDECIMAL.fullmatch(s):
        return float(int(s[2:], {"x": 16, "o": 8, "b": 2}[s[1].lower()]))
    return math.nan


def js_round(x: float) -> float:
    """`Math.round`: the nearest integer, ties towards +infinity (2.5 -> 3, -2.5 -> -2, 0.49999999999999994 -> 0)."""
    if not math.isfinite(x):
        return x
    floor = math.floor(x)
    return float(floor + 1 if x - floor >= 0.5 else floor)


def js_value(x: float | int) -> float | int:
    """A JS number as the plain Python value JSON.parse would give back: integral and safe -> int, else float."""
    if isinstance(x, float) and x.is_integer() and abs(x) <= MAX_SAFE_INTEGER:
        return int(x)
    return x


def js_number_to_string(x: float | int) -> str:
    """`String(x)` for a number (ECMAScript Number::toString): 4096, 0.000001, 1e-7, 1e+21."""
    if isinstance(x, float) and not math.isfinite(x):
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    if isinstance(x, int) and not isinstance(x, bool) and abs(x) > MAX_SAFE_INTEGER:
        x = float(x)
    return canonical_json(js_value(x) if isinstance(x, float) else x)


def ms_to_ns(ms: float) -> int | float:
    """`Math.round(ms * 1_000_000)`, the importer's ms -> ns conversion."""
    return js_value(js_round(ms * 1_000_000))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"JSON.parse rejects {name}")


def js_json_parse(text: str) -> Any:
    """`JSON.parse`: every number is a double (so 4096 and 4096.0 are the same), NaN/Infinity are errors."""
    return json.loads(text, parse_int=float, parse_constant=_reject_constant)
