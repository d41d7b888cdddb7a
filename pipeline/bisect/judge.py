"""The bisect's comparison of two sets of runs (standard library only: it runs on the GPU host).

Each run is one value: the geometric mean of the judged sweep's liger p50 over its x points. Two sets
differ when the rank test says so (two-sided p < alpha) AND the Hodges-Lehmann shift of their logs is
beyond the noise threshold; they are the same when the rank test does not separate them and the whole
interval of the shift lies within the threshold; anything else is unclear (more runs may settle it).
That is stricter than the warehouse's verdict rule, which calls a step beyond the threshold with
separated p20-p80 bands from a single run per side.
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
    threshold: float

    def to_json(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def compare(a: list[float], b: list[float], threshold: float, alpha: float = ALPHA) -> Comparison:
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    test = mann_whitney_u(la, lb)
    shift, low, high, level = shift_interval(la, lb)
    limit = math.log1p(threshold)
    if test.p_value < alpha and abs(shift) > limit:
        verdict = DIFFERENT
    elif test.p_value >= alpha and -limit <= low and high <= limit:
        verdict = SAME
    else:
        verdict = UNCLEAR
    return Comparison(
        verdict, math.exp(shift), math.exp(low), math.exp(high), level, test.p_value, len(a), len(b), threshold
    )


def can_separate(m: int, n: int, alpha: float = ALPHA) -> bool:
    """Whether m against n runs can reach p < alpha at all (3 against 3 cannot: 0.1 at best)."""
    return min_p_value(m, n) < alpha
