"""The bisect's rule (pipeline/bisect/judge.py): runs judged by their own spread against MIN_EFFECT."""

from __future__ import annotations

import random

from pipeline.bisect import judge


def _runs(level: float, n: int, spread: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [level * (1 + rng.uniform(-spread, spread)) for _ in range(n)]


def test_a_modest_shift_beyond_the_minimum_effect_is_different():
    c = judge.compare(_runs(1.0, 4, 0.01, 1), _runs(1.3, 4, 0.01, 2), min_effect=0.05)
    assert c.verdict == judge.DIFFERENT and 1.25 < c.ratio < 1.35 and c.p_value < 0.05


def test_a_shift_the_rank_test_sees_but_below_the_minimum_effect_is_the_same():
    a, b = _runs(1.0, 4, 0.005, 3), _runs(1.02, 4, 0.005, 4)
    c = judge.compare(a, b, min_effect=0.05)
    assert c.p_value < 0.05 and c.verdict == judge.SAME and c.ratio_high < 1.05
    assert judge.compare(a, b, min_effect=0.0).verdict == judge.DIFFERENT


def test_wide_runs_are_unclear_until_they_settle():
    # runs spreading +-30 % cannot say whether x1.02 is within 5 %: unclear, never "same"
    c = judge.compare(_runs(1.0, 4, 0.3, 5), _runs(1.02, 4, 0.3, 6), min_effect=0.05)
    assert c.verdict == judge.UNCLEAR


def test_exact_memory_is_the_same_only_when_equal():
    assert judge.compare([512.0] * 4, [512.0] * 4, min_effect=0.0).verdict == judge.SAME
    assert judge.compare([512.0] * 4, [513.0] * 4, min_effect=0.0).verdict == judge.DIFFERENT


def test_levels_are_found_where_runs_flip_and_not_in_one_level():
    flips = [1.0, 2.1, 1.01, 2.05, 0.99, 2.12]
    low, high = judge.levels(flips)
    assert sorted(low) == [0.99, 1.0, 1.01] and sorted(high) == [2.05, 2.1, 2.12]
    assert judge.levels(_runs(1.0, 8, 0.02, 7)) is None
    assert judge.levels([1.0, 2.0]) is None  # two runs say nothing about levels


def test_flipping_ends_are_still_separated_by_ranks():
    # both ends flip between levels about x2 apart; TO is x1.3 slower at each level
    a = [1.0, 2.0, 1.01, 2.02, 0.99, 1.98]
    b = [1.3 * v for v in (1.0, 2.0, 1.02, 2.01, 1.0, 1.99)]
    assert judge.compare(a, b, min_effect=0.05).verdict != judge.SAME
