"""Set-size effects and feature against conjunction search (Treisman & Gelade 1980): a
falling observer has a negative slope whose interval excludes 0, a flat one an interval
around 0; a conjunction deficit is found at large set sizes only."""

from __future__ import annotations

import numpy as np
import pytest

from visioneval.stats.setsize import conjunction_vs_feature, set_size_effect

SIZES = [4, 8, 16, 32]


def counts(accuracy, trials, seed):
    return np.random.default_rng(seed).binomial(trials, accuracy)


def test_accuracy_falling_with_set_size_has_a_negative_slope():
    k = counts(np.array([0.95, 0.85, 0.7, 0.55]), 100, 1)
    found = set_size_effect(SIZES, k, [100] * 4, resamples=300)
    assert found.logit_slope < 0 and found.logit_slope_ci[1] < 0
    assert found.points_ci[0] <= found.points_per_doubling <= found.points_ci[1] < 0
    assert found.points_per_doubling == pytest.approx(-0.13, abs=0.05)


def test_flat_accuracy_has_an_interval_around_zero():
    k = counts(np.full(4, 0.9), 200, 2)
    found = set_size_effect(SIZES, k, [200] * 4, resamples=300)
    assert found.logit_slope_ci[0] < 0 < found.logit_slope_ci[1]
    assert found.points_ci[0] < 0 < found.points_ci[1]


def test_a_conjunction_deficit_shows_at_large_set_sizes():
    feature = [143, 142, 143, 142]  # about 95% at every set size
    conjunction = [141, 128, 105, 83]  # 94%, 85%, 70%, 55%
    rows = conjunction_vs_feature(SIZES, feature, [150] * 4, conjunction, [150] * 4)
    assert [r.set_size for r in rows] == SIZES
    assert rows[0].p_value > 0.05 and rows[-1].p_value < 0.001
    last = rows[-1]
    assert last.interval[0] < last.difference < last.interval[1] and last.interval[0] > 0


def test_one_set_size_is_one_clear_line():
    with pytest.raises(ValueError, match="at least 2 different set sizes"):
        set_size_effect([8, 8], [5, 6], [10, 10])
