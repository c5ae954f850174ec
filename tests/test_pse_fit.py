"""`fit_pse`: the point of subjective equality and JND of a comparison task, its bootstrap
intervals, and what it refuses (measured coverage: measure/pse_recovery.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from visioneval.stats.pse_fit import JND_Z, fit_pse

LEVELS = np.linspace(85.0, 115.0, 9)


def expected_counts(levels: np.ndarray, pse: float, sigma: float, lapse: float,
                    trials: int) -> tuple[np.ndarray, np.ndarray]:
    """The rounded expected counts of "bigger" of an observer with these parameters."""
    p = lapse + (1 - 2 * lapse) * norm.cdf((levels - pse) / sigma)
    n = np.full(len(levels), trials)
    return np.round(p * n), n


def test_recovers_a_known_pse_sigma_and_lapse_from_expected_counts():
    k, n = expected_counts(LEVELS, 108.0, 6.0, 0.02, 100_000)
    found = fit_pse(LEVELS, k, n, resamples=0)
    assert found.status == "reached" and found.reason is None
    assert found.pse == pytest.approx(108.0, abs=0.01)
    assert found.sigma == pytest.approx(6.0, rel=1e-3)
    assert found.jnd == pytest.approx(JND_Z * 6.0, rel=1e-3)
    assert found.lapse == pytest.approx(0.02, abs=1e-4)
    assert found.illusion_strength(100.0) == pytest.approx(8.0, abs=0.01)
    assert found.weber_fraction(100.0) == pytest.approx(0.674 * 6.0 / 100.0, rel=1e-3)
    assert found.deviance is not None and found.deviance < 0.01


def test_a_fixed_lapse_is_kept_and_signed_levels_give_a_bias():
    """A Vernier offset is signed; its PSE is a bias and may be negative."""
    offsets = np.linspace(-3.0, 3.0, 7)
    k, n = expected_counts(offsets, -0.5, 1.0, 0.0, 100_000)
    found = fit_pse(offsets, k, n, lapse=0.0, resamples=0)
    assert found.lapse == 0.0
    assert found.pse == pytest.approx(-0.5, abs=1e-3)
    assert found.sigma == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize(("levels", "side", "words"), [
    (np.linspace(70.0, 100.0, 9), "above", "beyond the tested levels"),
    (np.linspace(115.0, 145.0, 9), "below", "below the tested levels"),
])
def test_a_pse_outside_the_tested_levels_is_not_reached_and_not_extrapolated(
        levels, side, words):
    k, n = expected_counts(levels, 108.0, 6.0, 0.02, 1000)
    found = fit_pse(levels, k, n, resamples=100)
    assert found.status == "not reached"
    assert found.pse is None and found.jnd is None and found.pse_ci is None
    assert found.outside == side
    assert found.reason is not None and words in found.reason
    assert found.illusion_strength(100.0) is None


def test_answers_that_do_not_change_with_the_level_are_not_reached():
    n = np.full(9, 20)
    found = fit_pse(LEVELS, [10, 9, 11, 10, 10, 9, 11, 10, 10], n, resamples=0)
    assert found.status == "not reached" and found.pse is None
    assert found.reason is not None and "do not change with the level" in found.reason
    assert found.flat_p is not None and found.flat_p >= 0.05


def test_a_single_level_is_not_reached_with_its_reason():
    found = fit_pse([100.0, 100.0], [3, 5], [10, 10])
    assert found.status == "not reached" and found.pse is None and found.sigma is None
    assert found.reason is not None and "at least 2" in found.reason


def test_a_reversed_comparison_is_refused_with_the_remedy():
    k, n = expected_counts(LEVELS, 100.0, 6.0, 0.02, 20)
    found = fit_pse(LEVELS, n - k, n, resamples=0)
    assert found.status == "not reached" and found.pse is None
    assert found.reason is not None and "read reversed" in found.reason
    assert fit_pse(LEVELS, k, n, resamples=0).status == "reached"


def test_the_intervals_hold_the_truth_on_a_seeded_run():
    truth_pse, truth_sigma = 108.0, 6.0
    p = 0.02 + 0.96 * norm.cdf((LEVELS - truth_pse) / truth_sigma)
    n = np.full(9, 16)
    k = np.random.default_rng(3).binomial(n, p)
    found = fit_pse(LEVELS, k, n, resamples=1000, seed=1)
    assert found.status == "reached" and found.resamples > 990
    assert found.pse_ci is not None and found.jnd_ci is not None
    low, high = found.pse_ci
    assert low is not None and high is not None and low < truth_pse < high
    assert high - low < 10  # an interval, not the whole range
    j_low, j_high = found.jnd_ci
    assert j_low is not None and j_high is not None
    assert j_low < JND_Z * truth_sigma < j_high
    assert found.deviance_p is not None and 0.05 < found.deviance_p <= 1
    again = fit_pse(LEVELS, k, n, resamples=1000, seed=1)
    assert again == found  # seeded


def test_an_interval_end_beyond_the_tested_levels_is_open():
    """The PSE 1 below the highest level with few trials: refits put it beyond."""
    levels = np.linspace(80.0, 110.0, 7)
    k, n = expected_counts(levels, 109.0, 6.0, 0.02, 10)
    found = fit_pse(levels, k, n, resamples=500)
    assert found.status == "reached" and found.pse_ci is not None
    low, high = found.pse_ci
    assert high is None and low is not None and low < 109.0
    assert found.illusion_interval(100.0) == (pytest.approx(100 * (low - 100) / 100), None)


@pytest.mark.parametrize(("levels", "bigger", "trials", "words"), [
    ([90.0, 100.0, 110.0], [1, 5], [10, 10, 10], "one value per level"),
    ([90.0, 100.0, 110.0], [1, 5, 9], [10, 0, 10], "at least 1"),
    ([90.0, 100.0, 110.0], [1, 12, 9], [10, 10, 10], "between 0 and n_trials"),
    ([90.0, math.nan, 110.0], [1, 5, 9], [10, 10, 10], "finite"),
])
def test_bad_input_gets_one_line(levels, bigger, trials, words):
    with pytest.raises(ValueError, match=words) as raised:
        fit_pse(levels, bigger, trials)
    assert "\n" not in str(raised.value)


def test_a_standard_must_be_positive():
    k, n = expected_counts(LEVELS, 100.0, 6.0, 0.0, 100)
    with pytest.raises(ValueError, match="positive"):
        fit_pse(LEVELS, k, n, resamples=0).weber_fraction(0.0)
