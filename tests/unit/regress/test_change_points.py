"""``segment_levels`` is ruptures' PELT written out (importing ruptures loads scipy.stats, a second of
every run): held here to ruptures' own breakpoints, which stay in the dev group for this test."""

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruptures.detection import Pelt

from pipeline.regress.change_points import segment_levels


def ruptures_breakpoints(levels: list[float], penalty: float) -> list[int]:
    import numpy as np

    if len(levels) < 3:
        return []
    signal = np.asarray(levels, dtype=float).reshape(-1, 1)
    return [b for b in Pelt(model="l2", min_size=1, jump=1).fit(signal).predict(pen=penalty) if b < len(levels)]


steps = st.floats(min_value=-0.7, max_value=0.7, allow_nan=False)
# levels as the build makes them: 0, then cumulative log ratios; plateaus and repeated steps give ties
level_series = st.lists(st.one_of(steps, st.sampled_from([0.0, 0.05, -0.05, 0.4])), min_size=0, max_size=40).map(
    lambda s: [0.0, *[sum(s[: i + 1]) for i in range(len(s))]]
)
penalties = st.sampled_from([0.01, 0.03, 0.1, 1.0]).flatmap(
    lambda f: st.floats(min_value=1e-6, max_value=0.05).map(lambda t: f * math.log1p(t) ** 2)
)


@settings(max_examples=600, deadline=None)
@given(level_series, penalties)
@example([0.0, 0.0, 0.0, 0.0], 1e-9)  # every split ties: the first candidate wins
@example([0.0, 0.3, 0.3, 0.3, 0.0, 0.0, 0.6, 0.6], 0.001)
@example([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], 0.0001)  # a ramp: many segments
def test_segment_levels_equals_ruptures_pelt(levels, penalty):
    assert segment_levels(levels, penalty) == ruptures_breakpoints(levels, penalty)


def test_a_step_is_found_where_it_happens():
    assert segment_levels([0.0, 0.0, 0.0, 0.5, 0.5, 0.5], 0.01) == [3]
    assert segment_levels([0.0, 0.01, -0.01, 0.0], 0.01) == []
