"""The fit's dispersion φ (Pearson X² over the residual degrees of freedom): about 1 when the
answers at a level are one binomial observer's, well above 1 when a level's stimuli share a
difficulty shift; with dispersion="fitted" the threshold interval widens with it, and the
run's tables say so in lines of at most 100 columns."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from rich.console import Console
from scipy.special import expit, logit
from scipy.stats import chi2, norm, t

from visioneval.benchmarks.psychophysics import tables
from visioneval.stats.psychometric_fit import fit, threshold_draws, threshold_interval

LEVELS = np.geomspace(1.0, 64.0, 8)
TRIALS = 40
GUESS = 1 / 3


def _counts(seed: int, tau: float) -> np.ndarray:
    """Right answers per level of a Weibull observer (α 8, β 1.5, λ 0.02) whose stimuli at
    one level share a shift τ·z of logit F, z standard normal (τ = 0: binomial)."""
    rng = np.random.default_rng(seed)
    f = -np.expm1(-(LEVELS / 8.0) ** 1.5)
    shift = tau * rng.standard_normal(len(LEVELS))
    return rng.binomial(TRIALS, GUESS + (1 - GUESS - 0.02) * expit(logit(f) + shift))


def _log_width(interval: tuple[float, float]) -> float:
    return math.log(interval[1] / interval[0])


def test_dispersion_is_pearson_x2_over_the_residual_degrees_of_freedom() -> None:
    k = _counts(3, 0.0)
    found = fit(LEVELS, k, [TRIALS] * len(LEVELS), GUESS, resamples=0)
    f = -np.expm1(-(LEVELS / found.alpha) ** found.beta)
    p = GUESS + (1 - GUESS - found.lapse) * f
    x2 = float(((k - TRIALS * p) ** 2 / (TRIALS * p * (1 - p))).sum())
    df = len(LEVELS) - 3  # α, β and λ
    assert found.dispersion == pytest.approx(x2 / df, rel=1e-6)
    assert found.dispersion_p == pytest.approx(chi2.sf(x2, df), rel=1e-6)
    three = fit(LEVELS[:3], k[:3], [TRIALS] * 3, GUESS, resamples=0)
    assert three.dispersion is None and three.dispersion_p is None  # no residual df


@pytest.mark.slow
def test_dispersion_is_near_one_for_a_binomial_observer_and_above_when_levels_differ(
) -> None:
    binomial = [fit(LEVELS, _counts(seed, 0.0), [TRIALS] * 8, GUESS, resamples=0)
                for seed in range(10)]
    shared = [fit(LEVELS, _counts(seed, 2.0), [TRIALS] * 8, GUESS, resamples=0)
              for seed in range(10)]
    # X²/5 has mean 1 and standard deviation 0.63 per fit: the mean of 10 within 0.6
    assert abs(np.mean([f.dispersion for f in binomial]) - 1.0) < 0.6
    assert np.mean([f.dispersion for f in shared]) > 2.5
    assert sum(f.overdispersed for f in shared) > sum(f.overdispersed for f in binomial)


def test_the_fitted_interval_widens_with_the_dispersion_and_not_without_it() -> None:
    n = [TRIALS] * len(LEVELS)
    over = next(k for k in (_counts(seed, 2.0) for seed in range(20))
                if fit(LEVELS, k, n, GUESS, resamples=0).overdispersed)
    binomial = threshold_draws(LEVELS, over, n, GUESS, resamples=200)
    fitted = threshold_draws(LEVELS, over, n, GUESS, resamples=200, dispersion="fitted")
    assert binomial.fit.dispersion is not None and binomial.fit.dispersion > 1
    narrow = threshold_interval(binomial.thresholds, 1.0, 64.0)
    wide = threshold_interval(fitted.thresholds, 1.0, 64.0)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]
    # at least the t reference's stretch on top of the beta-binomial refits' spread
    stretch = t.ppf(0.975, len(LEVELS) - 3) / norm.ppf(0.975)
    assert _log_width(wide) > stretch * _log_width(narrow)
    # where the answers vary no more than binomial the two intervals are the same
    calm = next(k for k in (_counts(seed, 0.0) for seed in range(20))
                if (fit(LEVELS, k, n, GUESS, resamples=0).dispersion or 2.0) <= 1.0)
    same = [threshold_draws(LEVELS, calm, n, GUESS, resamples=200, dispersion=d).thresholds
            for d in ("binomial", "fitted")]
    assert np.array_equal(same[0], same[1])


@pytest.mark.slow
def test_fits_own_bootstrap_widens_the_interval_as_the_draws_do() -> None:
    n = [TRIALS] * len(LEVELS)
    over = next(k for k in (_counts(seed, 2.0) for seed in range(20))
                if fit(LEVELS, k, n, GUESS, resamples=0).overdispersed)
    fitted = fit(LEVELS, over, n, GUESS, resamples=100, dispersion="fitted")
    plain = fit(LEVELS, over, n, GUESS, resamples=100)
    assert fitted.threshold_ci is not None and plain.threshold_ci is not None
    assert fitted.threshold == plain.threshold and fitted.dispersion == plain.dispersion
    assert _log_width(fitted.threshold_ci) > _log_width(plain.threshold_ci)


def test_the_tables_show_the_dispersion_and_say_when_it_is_beyond_binomial() -> None:
    threshold = {"feature": "orientation", "set_size": 4, "unit": "deg", "criterion": 0.75,
                 "status": "reached", "threshold": 7.6, "threshold_ci95": [5.5, 9.9],
                 "slope": 0.05, "beta": 3.0, "lapse": 0.02, "n_trials": 160,
                 "dispersion": 3.35, "dispersion_p": 0.005}
    calm = {**threshold, "feature": "color", "unit": "dE00", "dispersion": 0.61,
            "dispersion_p": 0.69}
    metrics = {"criterion": 0.75, "form": "weibull", "n": 320, "n_errors": 0,
               "n_unparsed": 0, "dispersion_model": "binomial",
               "thresholds": [threshold, calm]}
    for show in (tables.show_main, tables.show):
        out = Console(file=io.StringIO(), width=100)
        show(metrics, "psychophysics: m", out)
        text = out.file.getvalue()
        assert all(len(x) <= 100 for x in text.splitlines())
        header = next(x.split() for x in text.splitlines() if x.startswith("feature"))
        row = next(x.split() for x in text.splitlines() if x.startswith("orientation"))
        assert row[header.index("φ") + 1] == "3.35"  # "a to b" is one word more
        said = " ".join(text.split())  # the note wraps at 100 columns
        assert said.count("more than binomial") == 1
        assert ("orientation (set size 4): answers vary more than binomial between levels "
                "(φ 3.35, p 0.005): the interval may be too short") in said
    assert tables.threshold_rows(metrics)[1][tables.THRESHOLD_HEADER.index("dispersion")] \
        == "0.61"
    widened = tables.dispersion_notes({**metrics, "dispersion_model": "fitted"})
    assert len(widened) == 1 and "widened for it" in widened[0]


def test_compare_refits_each_run_as_its_own_bootstrap_simulated_it() -> None:
    from visioneval.benchmarks.psychophysics.difference import _draws, conditions

    k = next(k for k in (_counts(seed, 2.0) for seed in range(20))
             if fit(LEVELS, k, [TRIALS] * 8, GUESS, resamples=0).overdispersed)
    threshold = {"feature": "orientation", "set_size": 4, "unit": "deg", "guess": GUESS,
                 "form": "weibull", "criterion": 0.75}
    points = [{"experiment": "detection", "feature": "orientation", "set_size": 4,
               "level": float(level), "correct": int(c), "n": TRIALS}
              for level, c in zip(LEVELS, k, strict=True)]
    found = {model: conditions({"dispersion_model": model, "thresholds": [threshold],
                                "points": points})[("orientation", 4)]
             for model in ("binomial", "fitted")}
    assert found["fitted"].dispersion == "fitted"
    assert conditions({"thresholds": [threshold], "points": points})[
        ("orientation", 4)].dispersion == "binomial"  # runs from before the option
    spans = {}
    for model, condition in found.items():
        draws = _draws(condition, 200, 1)
        assert not isinstance(draws, str)
        spans[model] = _log_width(threshold_interval(draws.thresholds, 1.0, 64.0))
    assert spans["fitted"] > spans["binomial"]
