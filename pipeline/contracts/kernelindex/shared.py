"""The importers' shared helpers: `apps/web/src/server/import/shared.ts` (`kebab`, `toUtcInstant`,
`evaluateAxisExpression`), and the `localeCompare` order of axis names, of github.com/SamMausberg/KernelIndex at e6c5a71
(a reading copy: ../shared/reference/kernelindex, relative to the checkout).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from functools import lru_cache


@lru_cache(maxsize=1 << 12)
def kebab(value: str) -> str:
    """shared.ts `kebab`: lower case, runs of anything but [a-z0-9] -> "-", trimmed, at most 100 characters."""
    return _KEBAB_EDGES.sub("", _KEBAB_RUNS.sub("-", value.lower()))[:100]


_KEBAB_RUNS = re.compile(r"[^a-z0-9]+")
_KEBAB_EDGES = re.compile(r"^-+|-+$")


def locale_key(name: str) -> str:
    # `localeCompare` (ICU root collation) on axis names [a-z][a-z0-9_]*: "_" sorts before digits, digits
    # before letters, and a prefix first. Mapping "_" below "0" gives that order with a plain string sort.
    return name.replace("_", "\x01")


_ISO = re.compile(
    r"(?P<year>[+-]\d{6}|\d{4})(?:-(?P<month>\d\d)(?:-(?P<day>\d\d))?)?"
    r"(?:T(?P<hour>\d\d):(?P<minute>\d\d)(?::(?P<second>\d\d)(?:[.,](?P<frac>\d+))?)?)?"
    r"(?P<zone>[zZ]|[+-]\d\d:\d\d)?"
)


@lru_cache(maxsize=1 << 12)  # a sweep's rows share their timestamp
def to_utc_instant(value: str) -> str:
    """shared.ts `toUtcInstant`: no zone means UTC; printed as `Date.prototype.toISOString` (milliseconds, Z).

    Covers the ECMAScript date-time string format (what the CSV writes: `YYYY-MM-DDTHH:MM:SS` once the importer
    has put a `T` for the space). V8's fallback parser for other shapes is not reproduced: they raise ValueError.
    """
    with_zone = value if re.search(r"(z|[+-]\d\d:\d\d)$", value, re.IGNORECASE) else value + "Z"
    m = _ISO.fullmatch(with_zone)
    if not m or m["year"] == "-000000":
        raise ValueError(f"unparseable timestamp: {value}")
    year, month, day = int(m["year"]), int(m["month"] or 1), int(m["day"] or 1)
    hour, minute, second = int(m["hour"] or 0), int(m["minute"] or 0), int(m["second"] or 0)
    ms = int((m["frac"] or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute < 60 and second < 60):
        raise ValueError(f"unparseable timestamp: {value}")
    if hour > 24 or (hour == 24 and (minute or second or ms)):
        raise ValueError(f"unparseable timestamp: {value}")
    zone = m["zone"] or "Z"
    offset = 0 if zone in "zZ" else (1 if zone[0] == "+" else -1) * (int(zone[1:3]) * 60 + int(zone[4:6]))
    if not 1 <= year <= 9999:
        raise ValueError(f"timestamp outside years 1-9999 not supported: {value}")
    # Like MakeDay, a day past the month's end rolls over (2024-02-30 -> 2024-03-01); 24:00 is the next day.
    moment = datetime(year, month, 1, tzinfo=UTC) + timedelta(
        days=day - 1, hours=hour, minutes=minute - offset, seconds=second, milliseconds=ms
    )
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def evaluate_axis_expression(expression: str, bindings: Mapping[str, float]) -> float:
    """shared.ts `evaluateAxisExpression`: integers, axis names, + - * % // and parentheses, in doubles."""
    tokens = re.findall(r"\d+|[a-z_][a-z0-9_]*|//|[+\-*%()]", expression)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str | None:
        nonlocal pos
        token = peek()
        pos += 1
        return token

    def factor() -> float:
        token = take()
        if token is None:
            raise ValueError(f"unexpected end of '{expression}'")
        if token == "(":
            value = total()
            if take() != ")":
                raise ValueError(f"missing ')' in '{expression}'")
            return value
        if token.isdigit():
            return float(token)
        if token not in bindings:
            raise ValueError(f"unbound axis '{token}' in '{expression}'")
        return float(bindings[token])

    def product() -> float:
        value = factor()
        while peek() in ("*", "//", "%"):
            op, rhs = take(), factor()
            value = value * rhs if op == "*" else math.fmod(value, rhs) if op == "%" else float(math.floor(value / rhs))
        return value

    def total() -> float:
        value = product()
        while peek() in ("+", "-"):
            op, rhs = take(), product()
            value = value + rhs if op == "+" else value - rhs
        return value

    result = total()
    if pos != len(tokens):
        raise ValueError(f"trailing tokens in '{expression}'")
    return result
