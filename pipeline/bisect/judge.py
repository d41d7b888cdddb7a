"""The bisect's comparison of two sets of runs (standard library only: it runs on the GPU host).

Each run is one value: the geometric mean of the judged sweep's liger p50 over its x points. The runs
are judged by themselves: interleaved runs on one host within minutes are the noise that matters, so
the bar is their own spread (the rank test and the interval of the shift), against the smallest
change a person cares about, ``min_effect`` (docs/bisect.md: 5 % for speed, 0 for memory).

* **different**: the rank test separates them (two-sided p < alpha) and the Hodges-Lehmann shift of
  their logs is beyond the minimum effect;
* **same**: the whole interval of the shift lies within the minimum effect (a shift the rank test
  sees but nobody cares about, e.g. x1.02 against 5 %, is the same), or, with no minimum effect
  (memory, which upstream's harness measures exactly), every value is equal;
* anything else is **unclear** (more runs may settle it).
The warehouse's CI noise is not the bar: it is measured across days and machines and is often far
wider (+-54 % for H100 sweeps of 0.1-1 ms) than interleaved runs; the runner reports it as context.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

if __package__:
    from .ranktest import mann_whitney_u, min_p_value, shift_interval
else:  # run as a script from its folder (the GPU side)
    from ranktest import mann_whitney_u, min_p_value, shift_interval

DIFFERENT = "different"
SAME = "same"
UNCLEAR = "unclear"
ALPHA = 0.05
# A commit's runs "flip between levels" when their sorted logs split at a gap this many times wider
# than the spread inside either group, and at least LEVEL_MIN_GAP apart (launch-bound kernels jump x2).
LEVEL_GAP_FACTOR = 3.0
LEVEL_MIN_GAP = math.log(1.15)


@dataclass(frozen=True)
class Comparison:
    verdict: str
    ratio: float  # exp(Hodges-Lehmann shift of log b over log a): b / a
    ratio_low: float
    ratio_high: float
    interval_level: float
    p_value: float
    runs_a: int
    runs_b: int
    min_effect: float

    def to_json(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def compare(a: list[float], b: list[float], min_effect: float, alpha: float = ALPHA) -> Comparison:
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    test = mann_whitney_u(la, lb)
    shift, low, high, level = shift_interval(la, lb)
    limit = math.log1p(min_effect)
    if test.p_value < alpha and abs(shift) > limit:
        verdict = DIFFERENT
    elif -limit <= low and high <= limit and (limit > 0 or test.p_value >= alpha):
        verdict = SAME
    else:
        verdict = UNCLEAR
    return Comparison(
        verdict, math.exp(shift), math.exp(low), math.exp(high), level, test.p_value, len(a), len(b), min_effect
    )


def can_separate(m: int, n: int, alpha: float = ALPHA) -> bool:
    """Whether m against n runs can reach p < alpha at all (3 against 3 cannot: 0.1 at best)."""
    return min_p_value(m, n) < alpha


def levels(values: list[float]) -> tuple[list[float], list[float]] | None:
    """The two levels one commit's runs flip between (low, high), or None when they sit on one:
    the widest gap of the sorted logs, when it is LEVEL_GAP_FACTOR times the spread inside either
    side and at least LEVEL_MIN_GAP. Ranks are what separate two commits whose runs flip: the rank
    test does not care how far apart the levels are, only which runs sit above which."""
    if len(values) < 3:
        return None
    logs = sorted(math.log(v) for v in values)
    gap, at = max((logs[i + 1] - logs[i], i + 1) for i in range(len(logs) - 1))
    low, high = logs[:at], logs[at:]
    inside = max(low[-1] - low[0], high[-1] - high[0])
    if gap < LEVEL_MIN_GAP or gap < LEVEL_GAP_FACTOR * inside:
        return None
    return [math.exp(v) for v in low], [math.exp(v) for v in high]
