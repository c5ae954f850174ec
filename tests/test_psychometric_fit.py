"""Psychometric fits (Wichmann & Hill 2001): a simulated observer with a known threshold is
recovered within the bootstrap interval, the criterion goes through γ and λ correctly, and
data that never leave chance or never reach the criterion have no threshold."""

from __future__ import annotations

import numpy as np
import pytest

from visioneval.stats.psychometric import criterion_level, psi
from visioneval.stats.psychometric_fit import fit

GUESS = 1 / 3


def observe(levels, alpha, beta, lapse, trials, seed, form="weibull"):
    rng = np.random.default_rng(seed)
    p = np.array([psi(x, alpha, beta, GUESS, lapse, form) for x in levels])
    return rng.binomial(trials, p)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_known_threshold_lies_within_its_interval(seed):
    levels = 10 * np.geomspace(0.25, 3, 8)
    k = observe(levels, 10.0, 2.5, 0.02, 40, seed)
    found = fit(levels, k, [40] * 8, GUESS, resamples=100, seed=seed)
    true = criterion_level(0.75, 10.0, 2.5, GUESS, 0.02)
    assert found.status == "reached"
    assert found.threshold_ci is not None
    assert found.threshold_ci[0] <= true <= found.threshold_ci[1]
    assert abs(found.threshold - true) / true < 0.15
    assert found.resamples > 80
    assert 0.0 <= found.lapse_ci[0] <= found.lapse <= found.lapse_ci[1] <= 0.1


@pytest.mark.parametrize("form", ["weibull", "logistic"])
def test_psi_at_the_reported_threshold_equals_the_criterion(form):
    levels = np.linspace(2, 16, 8)
    k = observe(levels, 8.0, 0.6 if form == "logistic" else 3.0, 0.04, 60, 7, form)
    for criterion in (0.6, 0.75, 0.8):
        found = fit(levels, k, [60] * 8, GUESS, form=form, criterion=criterion, resamples=0)
        assert found.status == "reached"
        at = psi(found.threshold, found.alpha, found.beta, GUESS, found.lapse, form)
        assert at == pytest.approx(criterion, abs=1e-9)
        assert found.form == form and found.criterion == criterion
    assert psi(found.midpoint, found.alpha, found.beta, 0, 0, form) == pytest.approx(0.5)


def test_answers_at_chance_have_no_threshold():
    levels = np.geomspace(1, 30, 8)
    k = np.random.default_rng(5).binomial(40, GUESS, size=8)
    found = fit(levels, k, [40] * 8, GUESS, resamples=50)
    assert found.status == "not reached"
    assert found.threshold is None and found.threshold_ci is None and found.slope is None
    assert "guessing" in found.reason


def test_an_observer_who_never_reaches_the_criterion_has_no_threshold():
    # True threshold far beyond the tested levels: accuracy climbs but stays under 0.75.
    levels = np.geomspace(1, 8, 8)
    k = observe(levels, 20.0, 1.5, 0.0, 200, 6)
    found = fit(levels, k, [200] * 8, GUESS, resamples=0)
    assert found.chance_p < 0.05
    assert found.status == "not reached" and found.threshold is None
    assert "highest tested level" in found.reason


def test_a_low_ceiling_has_no_threshold():
    levels = np.geomspace(1, 30, 8)
    # Answers level off at 0.6: a lapse beyond the bound, so the criterion 0.75 is unreachable.
    k = observe(levels, 3.0, 3.0, 0.4, 200, 8)
    found = fit(levels, k, [200] * 8, GUESS, resamples=0)
    assert found.status == "not reached" and found.threshold is None


def test_bad_counts_are_one_clear_line():
    with pytest.raises(ValueError, match="n_correct"):
        fit([1, 2], [5, 50], [40, 40], GUESS)
    with pytest.raises(ValueError, match="positive levels"):
        fit([0, 2], [5, 30], [40, 40], GUESS)


def test_the_rise_is_at_least_two_steps_between_levels():
    """A step between two levels far apart fits no steeper than a rise (F from 0.05 to
    0.95) over twice the smallest step, as psignifit 4's width prior assumes; without the
    bound the fit goes to the steepest slope allowed and its interval collapses."""
    import math

    from visioneval.stats.psychometric_fit import fit

    levels = [0.5, 0.95, 1.81, 3.44, 6.54, 12.4, 23.7, 45.0]
    found = fit(levels, [7, 6, 7, 7, 20, 20, 20, 20], [20] * 8, 1 / 3, resamples=0)
    smallest = min(math.log(b / a) for a, b in zip(levels, levels[1:], strict=False))
    rise = (math.log(-math.log(0.05)) - math.log(-math.log(0.95))) / found.beta
    assert rise >= 2 * smallest - 1e-6
    assert found.threshold is not None and 3.44 < found.threshold < 6.54
