"""d′ and c with the log-linear correction (Hautus 1995): an observer who always says yes
has d′ ≈ 0, and a simulated observer's known d′ and c lie in their intervals."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest

from visioneval.stats.detection import dprime


@pytest.mark.parametrize("n_signal,n_noise", [(100, 100), (120, 80), (20, 20)])
def test_an_observer_who_always_says_yes_has_no_sensitivity(n_signal, n_noise):
    found = dprime(n_signal, n_signal, n_noise, n_noise)
    assert abs(found.dprime) < 0.2
    assert found.dprime_ci[0] < 0 < found.dprime_ci[1]
    assert found.criterion < -1  # a liberal observer


def test_a_known_sensitivity_and_criterion_are_recovered():
    d, c = 1.5, 0.3
    normal = NormalDist()
    hit, fa = normal.cdf(d / 2 - c), normal.cdf(-d / 2 - c)
    inside_d = inside_c = 0
    rng = np.random.default_rng(11)
    for _ in range(200):
        found = dprime(int(rng.binomial(200, hit)), 200, int(rng.binomial(200, fa)), 200)
        inside_d += found.dprime_ci[0] <= d <= found.dprime_ci[1]
        inside_c += found.criterion_ci[0] <= c <= found.criterion_ci[1]
    assert 0.9 <= inside_d / 200 <= 0.99
    assert 0.9 <= inside_c / 200 <= 0.99


def test_perfect_answers_stay_finite():
    found = dprime(50, 50, 0, 50)
    assert 3 < found.dprime < 6 and found.criterion == pytest.approx(0.0)


def test_bad_counts_are_one_clear_line():
    with pytest.raises(ValueError, match="hits"):
        dprime(5, 4, 0, 10)
