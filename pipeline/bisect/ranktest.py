"""Mann-Whitney U on the standard library: the GPU side may not import scipy.

Two-sided, as ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided")`` computes it:
* ``exact`` (no ties): the null distribution of U counted by the usual recurrence, p = 2 P(U >= max(U1, U2));
* ``asymptotic``: the normal approximation with the tie correction and a continuity correction.
``method="auto"`` takes exact when there are no ties and a side has at most 8 values, as scipy does.
``tests/unit/bisect/test_ranktest.py`` holds every figure to scipy's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

EXACT_MAX_SIDE = 8


def _ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based) of ``values`` and the sizes of their tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


@lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings give each U = 0..m*n (no ties)."""
    if m == 0 or n == 0:
        return (1,)
    a = _u_counts(m - 1, n)  # the largest value is in y... shifted by n when it is in x
    b = _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def exact_sf(u: float, m: int, n: int) -> float:
    """P(U >= u) under the null, no ties."""
    counts = _u_counts(m, n)
    total = sum(counts)
    start = max(0, math.ceil(u - 1e-9))
    return sum(counts[start:]) / total


@dataclass(frozen=True)
class UTest:
    u1: float  # U of the first sample
    p_value: float
    method: str


def mann_whitney_u(x: list[float], y: list[float], method: str = "auto") -> UTest:
    m, n = len(x), len(y)
    if m == 0 or n == 0:
        raise ValueError("both samples need at least one value")
    ranks, ties = _ranks(list(x) + list(y))
    r1 = sum(ranks[:m])
    u1 = r1 - m * (m + 1) / 2
    u2 = m * n - u1
    big = max(u1, u2)
    has_ties = any(t > 1 for t in ties)
    if method == "auto":
        method = "exact" if not has_ties and min(m, n) <= EXACT_MAX_SIDE else "asymptotic"
    if method == "exact":
        p = 2 * exact_sf(big, m, n)
    elif method == "asymptotic":
        total = m + n
        tie_term = sum(t**3 - t for t in ties) / (total * (total - 1))
        var = m * n / 12 * ((total + 1) - tie_term)
        if var <= 0:
            return UTest(u1, 1.0, method)
        z = (big - m * n / 2 - 0.5) / math.sqrt(var)
        p = math.erfc(z / math.sqrt(2))
    else:
        raise ValueError(f"unknown method {method!r}")
    return UTest(u1, min(1.0, max(0.0, p)), method)


def min_p_value(m: int, n: int) -> float:
    """The smallest two-sided exact p-value m against n runs can give: complete separation."""
    return min(1.0, 2 / math.comb(m + n, m))


def shift_interval(x: list[float], y: list[float], level: float = 0.95) -> tuple[float, float, float, float]:
    """Hodges-Lehmann shift of y over x and its distribution-free interval: (estimate, low, high, level).

    The interval is the k-th smallest and k-th largest of the m*n differences y_j - x_i, k the
    largest with P(U < k) <= (1 - level) / 2 under the exact null; too few runs for the asked level
    give the whole range of the differences and the level that range reaches."""
    m, n = len(x), len(y)
    diffs = sorted(b - a for a in x for b in y)
    mid = len(diffs) // 2
    estimate = diffs[mid] if len(diffs) % 2 else (diffs[mid - 1] + diffs[mid]) / 2
    counts = _u_counts(m, n)
    total = sum(counts)
    tail, k = 0.0, 0
    while k < len(counts) and tail + counts[k] / total <= (1 - level) / 2:
        tail += counts[k] / total
        k += 1
    if k == 0:
        return estimate, diffs[0], diffs[-1], 1 - 2 * counts[0] / total
    return estimate, diffs[k - 1], diffs[-k], 1 - 2 * tail
