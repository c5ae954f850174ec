"""Threshold differences between two independent psychometric fits (`visioneval compare`):
the refits behind the draws are maxima at least as good as scipy's, observers whose
thresholds differ threefold are told apart with the ratio's interval covering 3, equal
observers are not, refits that never reach the criterion are counted honestly, and a fit
that was not reached gets no difference, with the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from visioneval.benchmarks.psychophysics.difference import (
    Difference,
    compare_draws,
    differences,
    interval_text,
)
from visioneval.stats import psychometric_fit
from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import ThresholdDraws, fit, threshold_draws

GUESS = 1 / 3
LEVELS = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 45.0]
TRIALS = 40


def counts(alpha: float, seed: int, beta: float = 3.0, lapse: float = 0.02) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(rng.binomial(TRIALS, psi(x, alpha, beta, GUESS, lapse))) for x in LEVELS]


def draws(alpha: float, seed: int, resamples: int = 400) -> ThresholdDraws:
    return threshold_draws(LEVELS, counts(alpha, seed), [TRIALS] * len(LEVELS), GUESS,
                           resamples=resamples, seed=100 + seed)


def where() -> Difference:
    return Difference("orientation", 16, "deg", "a (first)", "b (other)")


@pytest.mark.slow
@pytest.mark.parametrize(("form", "alpha", "beta"), [("weibull", 8.0, 3.0),
                                                     ("logistic", 10.0, 0.4)])
def test_the_refits_reach_maxima_at_least_as_high_as_scipys(form, alpha, beta):
    p = np.asarray([psi(x, alpha, beta, GUESS, 0.02, form) for x in LEVELS])
    rng = np.random.default_rng(5)
    k = rng.binomial(TRIALS, p)
    data = psychometric_fit._prepare(LEVELS, k, [TRIALS] * 8, GUESS, form, 0.75,
                                     psychometric_fit.LAPSE_BOUNDS)
    resampled = rng.binomial(TRIALS, p, size=(40, 8))
    found = fit(LEVELS, k, [TRIALS] * 8, GUESS, form, resamples=0)
    a = math.log(found.alpha) if form == "weibull" else found.alpha
    start = np.array([a, math.log(found.beta), found.lapse])
    thetas, converged = psychometric_fit._refit_all(data, resampled.astype(float), start)
    assert converged.all()
    ours = psychometric_fit._log_likelihood(thetas, data, resampled.astype(float))
    lower = 0
    for row, k_row in enumerate(resampled.astype(float)):
        # scipy's L-BFGS-B from the same start, as the run's own bootstrap refits
        theta, _ = psychometric_fit._maximise(data, k_row, start)
        theirs = float(psychometric_fit._log_likelihood(theta, data, k_row))
        lower += bool(ours[row] < theirs - 1e-5)
    # Either may stop at a local maximum the other avoids (one data set here has a higher
    # maximum where the slope meets its bound); all but one or two rows are as high.
    assert lower <= 2


@pytest.mark.slow
def test_the_draws_give_the_fits_own_interval():
    k = counts(8.0, 2)
    found = fit(LEVELS, k, [TRIALS] * 8, GUESS, resamples=300, seed=9)
    drawn = threshold_draws(LEVELS, k, [TRIALS] * 8, GUESS, resamples=300, seed=9)
    assert drawn.fit.threshold == found.threshold
    assert len(drawn.thresholds) >= 295 and drawn.resamples == 300
    low, high = np.quantile(drawn.thresholds, [0.025, 0.975], method="inverted_cdf")
    assert found.threshold_ci is not None
    assert abs(math.log(low / found.threshold_ci[0])) < 0.1
    assert abs(math.log(high / found.threshold_ci[1])) < 0.1


def test_a_threefold_threshold_is_significant_and_its_ratio_interval_covers_three():
    result = compare_draws(draws(8.0, 1), draws(24.0, 2), where())
    assert result.p_value is not None and result.p_value < 0.01 and result.significant
    assert result.difference_ci95 is not None and result.difference_ci95[0] > 0
    true = criterion_level(0.75, 24.0, 3.0, GUESS, 0.02) / criterion_level(  # type: ignore[operator]
        0.75, 8.0, 3.0, GUESS, 0.02)
    assert result.ratio_ci95 is not None
    assert result.ratio_ci95[0] <= true <= result.ratio_ci95[1]
    assert result.ratio == pytest.approx(result.other_threshold / result.first_threshold)
    assert result.pairs >= 390 and result.undefined == 0 and result.reason is None


def test_equal_observers_are_not_told_apart():
    result = compare_draws(draws(8.0, 3), draws(8.0, 4), where())
    assert result.p_value is not None and result.p_value > 0.05
    assert not result.significant
    assert result.difference_ci95 is not None
    assert result.difference_ci95[0] < 0 < result.difference_ci95[1]
    assert result.ratio_ci95 is not None and result.ratio_ci95[0] < 1 < result.ratio_ci95[1]


def test_refits_that_never_reach_the_criterion_are_counted_not_dropped():
    base = draws(8.0, 1, resamples=10)
    inf = math.inf
    first = ThresholdDraws(base.fit, np.array([5, 6, inf, inf, 7, 5.5, 4, 4, 4, 4]), 10)
    other = ThresholdDraws(base.fit, np.array([9, inf, 4, inf, 8, 5.5, 9, 9, 9, 9]), 10)
    result = compare_draws(first, other, where())
    # differences: 4, +inf, -inf, none (both beyond every level), 1, 0, 5, 5, 5, 5
    assert (result.pairs, result.undefined) == (10, 1)
    # at or below 0: -inf, the tie, the undefined pair (3); at or above: 9
    assert result.p_value == pytest.approx(2 * (3 + 1) / 11)
    assert result.difference_ci95 == (-inf, inf)  # 9 defined: the ends are the extremes
    assert interval_text(result.difference_ci95) == "unbounded to unbounded"
    assert result.ratio_ci95 == (0.0, inf)
    assert (first.not_reached, other.not_reached) == (2, 2)


def _metrics(k: list[int], criterion: float = 0.75, status: str = "reached") -> dict:
    points = [{"experiment": "detection", "feature": "orientation", "set_size": 16,
               "level": x, "n": TRIALS, "correct": c} for x, c in zip(LEVELS, k, strict=True)]
    return {"points": points,
            "thresholds": [{"feature": "orientation", "set_size": 16, "unit": "deg",
                            "guess": GUESS, "form": "weibull", "criterion": criterion,
                            "status": status}]}


def test_a_fit_without_threshold_or_with_other_settings_has_no_difference():
    flat = [int(TRIALS * GUESS)] * len(LEVELS)  # at chance everywhere
    runs = [("a (first)", _metrics(counts(8.0, 1))), ("b (flat)", _metrics(flat)),
            ("c (criterion 0.8)", _metrics(counts(8.0, 2), criterion=0.8)),
            ("d (same)", _metrics(counts(8.0, 3)))]
    found = differences(runs, resamples=200)
    assert [d.other for d in found] == ["b (flat)", "c (criterion 0.8)", "d (same)"]
    flat_row, other_settings, same = found
    assert flat_row.p_value is None and flat_row.difference is None
    assert flat_row.reason is not None and "b (flat): not reached" in flat_row.reason
    assert "guessing" in flat_row.reason
    assert other_settings.reason is not None and "different settings" in other_settings.reason
    assert same.reason is None and same.p_value is not None and same.pairs >= 190
