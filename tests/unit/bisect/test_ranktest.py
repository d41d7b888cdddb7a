"""The stdlib Mann-Whitney U and shift interval against scipy's (the GPU side cannot import scipy)."""

import random

import pytest
from scipy import stats

from pipeline.bisect import judge
from pipeline.bisect.ranktest import mann_whitney_u, min_p_value, shift_interval


def _samples(rng: random.Random, ties: bool):
    m, n = rng.randint(1, 9), rng.randint(1, 9)
    draw = (lambda: float(rng.randint(0, 4))) if ties else (lambda: rng.random())
    return [draw() for _ in range(m)], [draw() + rng.choice([0, 0.3]) for _ in range(n)]


@pytest.mark.parametrize("seed", range(150))
def test_u_and_p_match_scipy(seed):
    rng = random.Random(seed)
    x, y = _samples(rng, ties=seed % 2 == 1)
    ours = mann_whitney_u(x, y)
    ref = stats.mannwhitneyu(x, y, alternative="two-sided", method=ours.method)
    assert ours.u1 == pytest.approx(ref.statistic)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-12)
    asym = stats.mannwhitneyu(x, y, alternative="two-sided", method="asymptotic")
    assert mann_whitney_u(x, y, method="asymptotic").p_value == pytest.approx(asym.pvalue, rel=1e-9, abs=1e-12)


def test_small_samples_cannot_separate():
    assert min_p_value(3, 3) == pytest.approx(0.1)
    assert not judge.can_separate(3, 3) and not judge.can_separate(3, 4) and judge.can_separate(4, 4)
    assert mann_whitney_u([1, 2, 3], [10, 11, 12]).p_value == pytest.approx(0.1)


def test_shift_interval_holds_the_shift():
    x = [1.0, 1.1, 0.9, 1.05, 0.95, 1.02]
    y = [v + 2 for v in x]
    est, low, high, level = shift_interval(x, y)
    assert est == pytest.approx(2.0) and low <= 2.0 <= high and 0.9 <= level <= 1.0


def test_compare_verdicts():
    a = [1.0, 1.01, 0.99, 1.0]
    assert judge.compare(a, [5 * v for v in a], 0.1).verdict == judge.DIFFERENT
    assert judge.compare(a, [v * 1.001 for v in a], 0.1).verdict == judge.SAME
    assert judge.compare(a[:3], [5 * v for v in a[:3]], 0.1).verdict == judge.UNCLEAR  # 3 v 3: p >= 0.1
    assert judge.compare(a, [1.05 * v for v in a], 0.01).verdict == judge.DIFFERENT
    assert judge.compare(a, [1.05 * v for v in a], 0.10).verdict != judge.DIFFERENT  # within the noise
