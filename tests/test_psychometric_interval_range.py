"""Threshold intervals stay inside the tested levels: a shallow logistic observer whose
bootstrap refits put the threshold below the lowest tested level (some below 0) gets an
open lower end, "below the tested levels", never a number outside the levels."""

from __future__ import annotations

import math

import numpy as np

from visioneval.benchmarks.psychophysics.tables import span
from visioneval.core.headline import Headline, interval_of
from visioneval.stats.psychometric import psi
from visioneval.stats.psychometric_fit import (
    fit,
    open_ends,
    threshold_draws,
    threshold_interval,
)

GUESS = 1 / 3
LEVELS = np.arange(4.0, 15.0)
TRIALS = 20


def _counts(seed: int) -> np.ndarray:
    p = [psi(v, 4.0, 0.3, GUESS, 0.02, "logistic") for v in LEVELS]
    return np.random.default_rng(seed).binomial(TRIALS, p)


def test_refits_below_the_lowest_level_leave_the_lower_end_open() -> None:
    k = _counts(3)
    found = fit(LEVELS, k, [TRIALS] * len(LEVELS), GUESS, "logistic", resamples=100, seed=3)
    assert found.status == "reached" and found.threshold_ci is not None
    draws = threshold_draws(LEVELS, k, [TRIALS] * len(LEVELS), GUESS, "logistic",
                            resamples=100, seed=3)
    assert np.quantile(draws.thresholds, 0.025) < 0  # the refits' own numbers go below 0
    low, high = found.threshold_ci
    assert low == -math.inf and 4.0 <= found.threshold <= high <= 14.0
    shown = open_ends(found.threshold_ci)
    assert shown[0] is None and shown[1] == high
    assert span(shown).startswith("below the tested levels to ")
    assert Headline("t", found.threshold, interval_of(list(shown)), percent=False
                    ).interval_text == f"up to {high:.3g}"


def test_interval_ends_outside_the_levels_are_open_and_inside_kept() -> None:
    draws = np.array([-3.0] * 10 + [6.0] * 180 + [20.0] * 10)
    assert threshold_interval(draws, 4.0, 14.0) == (-math.inf, math.inf)
    inside = np.array([5.0] * 10 + [6.0] * 180 + [9.0] * 10)
    assert threshold_interval(inside, 4.0, 14.0) == (5.0, 9.0)
    assert open_ends((-math.inf, math.inf)) == (None, None)
