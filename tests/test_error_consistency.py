"""Error consistency (Geirhos, Meding & Wichmann 2020): kappa, c_obs and c_exp on tables
computed by hand, the undefined case, the paper's binomial test, and the interval's coverage
on simulated observers of known kappa."""

from __future__ import annotations

import math

import numpy as np
import pytest

from visioneval.stats.error_consistency import (
    error_consistency,
    from_counts,
    kappa_of,
    smoothed_interval,
)


def _trials(both_right: int, only_a: int, only_b: int, both_wrong: int
            ) -> tuple[list[bool], list[bool]]:
    a = [True] * both_right + [True] * only_a + [False] * only_b + [False] * both_wrong
    b = [True] * both_right + [False] * only_a + [True] * only_b + [False] * both_wrong
    return a, b


def test_kappa_c_obs_and_c_exp_of_a_table_computed_by_hand():
    # 50 trials: 40 both right, 5 only a, 3 only b, 2 both wrong. p_a = 0.9, p_b = 0.86;
    # c_obs = 42/50 = 0.84; c_exp = 0.9 * 0.86 + 0.1 * 0.14 = 0.788;
    # kappa = (0.84 - 0.788) / 0.212 = 0.052 / 0.212.
    result = error_consistency(*_trials(40, 5, 3, 2))
    assert result.n == 50
    assert (result.both_right, result.only_a_right, result.only_b_right,
            result.both_wrong) == (40, 5, 3, 2)
    assert result.accuracy_a == pytest.approx(0.9)
    assert result.accuracy_b == pytest.approx(0.86)
    assert result.c_obs == pytest.approx(0.84)
    assert result.c_exp == pytest.approx(0.788)
    assert result.kappa == pytest.approx(0.052 / 0.212)
    assert result.reason is None
    assert result.note is None  # a made 5 errors and b 7: enough for the interval
    assert from_counts(41, 5, 3, 1).note == ("observer a has 4 errors in 50 trials: the "
                                             "interval's 95% is measured from 5 on")


def test_the_paper_binomial_test_by_hand():
    # 42 of 50 trials agree; under independence each agrees with probability 0.788.
    p = 0.788
    pmf = [math.comb(50, k) * p ** k * (1 - p) ** (50 - k) for k in range(51)]
    lower, upper = sum(pmf[:43]), sum(pmf[42:])
    result = from_counts(40, 5, 3, 2)
    assert result.p_value == pytest.approx(min(1.0, 2 * min(lower, upper)), rel=1e-9)


def test_the_same_errors_are_kappa_1_and_opposite_ones_minus_1():
    assert from_counts(30, 0, 0, 20).kappa == pytest.approx(1.0)
    assert from_counts(0, 25, 25, 0).kappa == pytest.approx(-1.0)
    independent = from_counts(36, 24, 24, 16)  # p_a = p_b = 0.6, P(both right) = 0.36
    assert independent.kappa == pytest.approx(0.0, abs=1e-12)
    assert independent.p_value == pytest.approx(1.0)


@pytest.mark.parametrize(("counts", "which"), [((50, 0, 0, 0), "right"),
                                               ((0, 0, 0, 12), "wrong")])
def test_both_always_right_or_always_wrong_has_no_kappa(counts, which):
    result = from_counts(*counts)
    assert result.c_exp == 1.0 and result.c_obs == 1.0
    assert result.kappa is None and result.interval is None and result.p_value is None
    assert result.reason is not None and f"were {which} on all" in result.reason
    assert "c_exp = 1" in result.reason


def test_no_trials_in_common_has_no_figures():
    result = error_consistency([], [])
    assert result.n == 0 and result.kappa is None and result.c_obs is None
    assert result.reason == "no trial answered by both observers"


def test_one_observer_never_wrong_has_no_kappa_with_the_reason():
    """With a never wrong, c_obs = c_exp = b's accuracy, so kappa is 0 for any b: absent,
    not a 0 that reads as 'errors on unrelated trials'."""
    result = from_counts(40, 10, 0, 0)  # a right on all 50, b on 40
    assert result.kappa is None and result.interval is None and result.p_value is None
    assert result.c_obs == result.c_exp == 0.8
    assert result.reason is not None and "observer a was right on all 50" in result.reason
    near = from_counts(39, 10, 1, 0)  # one error of a: defined, with the few-errors note
    assert near.kappa is not None and near.note is not None
    assert near.note.startswith("observer a has 1 errors")


def test_unequal_lengths_and_negative_counts_are_refused():
    with pytest.raises(ValueError, match="answered 2 and 3 trials"):
        error_consistency([True, False], [True, True, False])
    with pytest.raises(ValueError, match="cannot be negative"):
        from_counts(1, -1, 0, 0)


def test_the_interval_is_seeded_and_holds_the_estimate():
    a, b = _trials(120, 20, 25, 35)
    first, again = error_consistency(a, b), error_consistency(a, b)
    assert first.interval == again.interval
    assert first.interval is not None and first.kappa is not None
    low, high = first.interval
    assert -1 <= low < first.kappa < high <= 1
    assert error_consistency(a, b, seed=1).interval != first.interval
    assert first.note is None


def test_kappa_of_tables_is_the_papers_formula():
    rng = np.random.default_rng(4)
    cells = rng.integers(0, 30, size=(500, 4))
    n = cells.sum(axis=1)
    p_a, p_b = (cells[:, 0] + cells[:, 1]) / n, (cells[:, 0] + cells[:, 2]) / n
    c_obs = (cells[:, 0] + cells[:, 3]) / n
    c_exp = p_a * p_b + (1 - p_a) * (1 - p_b)
    assert np.allclose(kappa_of(cells), (c_obs - c_exp) / (1 - c_exp))


def _shares(h: float, error: float, s: float) -> np.ndarray:
    """Two alike observers sharing hard trials (measure/error_consistency_recovery.py): each
    errs with probability error (1 - h s) on an easy trial, plus error s on a hard one."""
    easy, hard = error * (1 - h * s), error * (1 - h * s) + error * s
    return sum(weight * np.array([(1 - e) ** 2, (1 - e) * e, e * (1 - e), e * e])
               for weight, e in ((h, hard), (1 - h, easy)))


def test_the_interval_covers_a_known_kappa_in_simulated_runs():
    # h 0.3, 25% errors: kappa = 2 h (1 - h) E^2 s^2 / (2 E (1 - E)) = 0.2 at this s.
    h, error = 0.3, 0.25
    s = math.sqrt(0.2 * error * (1 - error) / (h * (1 - h) * error ** 2))
    shares = _shares(h, error, s)
    assert float(kappa_of(shares)) == pytest.approx(0.2)
    rng = np.random.default_rng(11)
    cells = rng.multinomial(100, shares, size=200)
    bounds = smoothed_interval(cells, rng=rng)
    held = np.mean((bounds[:, 0] <= 0.2) & (bounds[:, 1] >= 0.2))
    assert 0.90 <= held <= 0.99  # 1000 runs: 94.9% (docs/error-consistency.md)
    # Independent observers: the binomial test rejects at most about 5% of runs.
    independent = rng.multinomial(100, _shares(h, error, 0.0), size=200)
    p = np.array([from_counts(*row, resamples=1).p_value for row in independent.tolist()])
    assert np.mean(p < 0.05) <= 0.06
