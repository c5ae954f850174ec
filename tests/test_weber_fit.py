"""The Weber fraction fit (stats/weber_fit.py): the model's ψ and its inverse, recovery from
the counts the model expects, the "not reached" rules in their order, open interval ends
where the tested ratios cannot tell, and one line for input no fit can use."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from visioneval.stats.weber_fit import (
    fit_weber,
    ratio_of,
    spread_of,
    w_at,
    weber_psi,
    weber_ratio,
)

RATIOS = [13 / 12, 11 / 10, 8 / 7, 6 / 5, 4 / 3, 3 / 2, 2.0, 5 / 2, 3.0]


def expected(w: float, lapse: float, n: int) -> list[int]:
    return [round(n * weber_psi(r, w, lapse)) for r in RATIOS]


def test_psi_is_the_standard_model_of_two_numbers():
    """Φ(|n1 − n2| / (w·√(n1² + n2²))) for 12 and 16 dots at w = 0.2 is the model at 4/3."""
    direct = float(norm.cdf(4 / (0.2 * math.sqrt(12 ** 2 + 16 ** 2))))
    assert weber_psi(16 / 12, 0.2) == pytest.approx(direct, abs=1e-12)
    assert weber_psi(1.0, 0.2, 0.03) == pytest.approx(0.5)
    assert weber_psi(1e9, 0.01, 0.03) == pytest.approx(0.97)


def test_the_ratio_at_a_criterion_inverts_psi():
    for w, lapse in ((0.1, 0.0), (0.2, 0.02), (0.4, 0.05)):
        found = weber_ratio(w, 0.75, lapse)
        assert found is not None and weber_psi(found, w, lapse) == pytest.approx(0.75)
    assert ratio_of(spread_of(2.5)) == pytest.approx(2.5)
    assert weber_psi(1.5, w_at(1.5)) == pytest.approx(norm.cdf(1.0))
    assert weber_ratio(0.2, 0.97, 0.05) is None  # above the ceiling 1 − λ
    assert weber_ratio(2.0, 0.75) is None  # a(r) never reaches 0.674 · 2


def test_expected_counts_give_back_the_model():
    found = fit_weber(RATIOS, expected(0.2, 0.02, 4000), [4000] * len(RATIOS), resamples=200,
                      seed=1)
    assert found.status == "reached"
    assert found.w == pytest.approx(0.2, rel=0.01)
    assert found.lapse == pytest.approx(0.02, abs=0.003)
    assert found.threshold == pytest.approx(weber_ratio(0.2, 0.75, 0.02), rel=0.005)
    assert found.w_ci is not None and found.w_ci[0] < 0.2 < found.w_ci[1]
    assert found.threshold_ci is not None and None not in found.threshold_ci
    assert len(found.w_draws) == found.resamples > 190


def test_the_bootstrap_takes_the_fits_median_bias_off_w_and_its_interval():
    """The refits' median w lies below the fit's; w is the fit's raised by that factor, and
    the refits' percentiles are moved by it too, so their median is the fit's own w."""
    rng = np.random.default_rng(8)
    counts = rng.binomial(16, [weber_psi(r, 0.3, 0.02) for r in RATIOS]).tolist()
    plain = fit_weber(RATIOS, counts, [16] * len(RATIOS), resamples=0)
    found = fit_weber(RATIOS, counts, [16] * len(RATIOS), resamples=400, seed=3)
    assert plain.w == plain.fitted_w == found.fitted_w and plain.w_ci is None
    assert found.w is not None and found.w_ci is not None and found.fitted_w is not None
    assert found.w > found.fitted_w
    assert float(np.median(found.w_draws)) == pytest.approx(found.fitted_w, rel=0.01)
    low, high = np.quantile(found.w_draws, [0.025, 0.975], method="inverted_cdf")
    assert found.w_ci == pytest.approx((low, high))


@pytest.mark.slow
def test_a_model_observer_is_recovered_with_an_interval_that_covers_it():
    """Twenty simulated observers at the default design: the intervals hold w = 0.2 in most
    and the median estimate is near it (docs/numerosity.md measures 600 and more)."""
    rng = np.random.default_rng(4)
    p = [weber_psi(r, 0.2, 0.02) for r in RATIOS]
    fits = [fit_weber(RATIOS, rng.binomial(16, p).tolist(), [16] * len(RATIOS),
                      resamples=300, seed=s) for s in range(20)]
    estimates = [f.w for f in fits if f.w is not None]
    covered = sum(f.w_ci is not None and (f.w_ci[0] or 0) <= 0.2 <= (f.w_ci[1] or math.inf)
                  for f in fits)
    assert len(estimates) == 20 and covered >= 16
    assert float(np.median(estimates)) == pytest.approx(0.2, rel=0.12)


def test_every_ratio_told_apart_is_below_what_the_ratios_measure():
    found = fit_weber(RATIOS, [16] * len(RATIOS), [16] * len(RATIOS), resamples=50)
    assert found.status == "not reached" and found.w is None
    assert "below 0.0565" in found.reason and found.fitted_w is not None


def test_answers_at_chance_do_not_beat_it():
    found = fit_weber(RATIOS, [8, 9, 7, 8, 8, 9, 8, 7, 8], [16] * len(RATIOS))
    assert found.status == "not reached" and "do not beat chance" in found.reason


def test_answers_that_fall_below_chance_are_read_reversed():
    """A model that names the side with bigger dots under equal total area: wrong, the more
    so the larger the ratio."""
    right = [16 - k for k in expected(0.2, 0.0, 16)]
    found = fit_weber(RATIOS, right, [16] * len(RATIOS))
    assert found.status == "not reached" and "below chance" in found.reason


def test_a_coarse_observer_is_above_the_tested_ratios():
    found = fit_weber(RATIOS, expected(2.0, 0.0, 4000), [4000] * len(RATIOS))
    assert found.status == "not reached" and "above 0.632" in found.reason


def test_an_interval_end_beyond_the_ratios_is_open():
    """w = 0.06 at 16 trials a ratio: the smallest ratio is near the ceiling already, so
    the data cannot tell how much smaller w is; the interval's lower end is open."""
    rng = np.random.default_rng(2)
    p = [weber_psi(r, 0.065, 0.0) for r in RATIOS]
    opened = 0
    for s in range(8):
        found = fit_weber(RATIOS, rng.binomial(16, p).tolist(), [16] * len(RATIOS),
                          resamples=300, seed=s)
        if found.w_ci is not None:
            opened += found.w_ci[0] is None
            assert found.w_ci[1] is not None
    assert opened >= 4


def test_one_ratio_is_not_a_curve():
    found = fit_weber([1.5, 1.5], [10, 12], [16, 16])
    assert found.status == "not reached" and "1 distinct ratio" in found.reason


@pytest.mark.parametrize(("ratios", "k", "n", "message"), [
    ([1.5, 2.0], [1], [16, 16], "one value per ratio"),
    ([0.5, 2.0], [8, 9], [16, 16], "above 1"),
    ([1.5, 2.0], [17, 9], [16, 16], "between 0 and n_trials"),
    ([1.5, 2.0], [8, 9], [0, 16], "at least 1"),
])
def test_bad_counts_get_one_line(ratios, k, n, message):
    with pytest.raises(ValueError, match=message):
        fit_weber(ratios, k, n)
