"""Trial-by-trial error consistency of two observers (Geirhos, Meding & Wichmann 2020, "Beyond
accuracy: quantifying trial-by-trial behaviour of CNNs and humans by measuring error
consistency", NeurIPS 2020, arXiv 2006.16736): whether a model and a person, or any two
observers, err on the same trials more often than their accuracies alone would make them.

On the n trials both answered, c_obs is the share where both were right or both wrong;
c_exp = p_a p_b + (1 - p_a)(1 - p_b) is that share expected of two independent observers
with these accuracies; kappa = (c_obs - c_exp) / (1 - c_exp) (Cohen's kappa on the 2 x 2
table of right and wrong). With a = both right, b = only a right, c = only b right,
d = both wrong this is 2(ad - bc) / ((a + b)(b + d) + (a + c)(c + d)), computed here in
counts, so it is exact. When c_exp = 1 (both observers always right, or both always wrong)
kappa is 0 / 0: absent, with the reason. (The paper's reference code, wichmann-lab/
error-consistency, sets kappa to 1 whenever c_obs = 1; here a pair with nothing to be
consistent about has no kappa.)

The 95% interval is the bootstrap over trials, smoothed. A trial is one of four kinds, so a
resample is a draw of the four counts from a multinomial: 1000 resamples are one array,
whatever the number of trials. The draw is from the observed shares with half a trial added
to each kind, and each resample's kappa is taken with the same half trial added: with
accurate observers the trials both got wrong are few or none, and a plain bootstrap then
never draws one, so its every resample lies below the truth. On simulated observers of
known kappa (measure/error_consistency_recovery.py, docs/error-consistency.md) this interval
held the true kappa in 93 to 99% of runs from 50 trials on, where the plain percentile,
BCa, bootstrap-t and Wald intervals held it in 42 to 65% of some settings with observers
90-95% right; the exception is a pair with almost no errors (about 2 and 5 in 50 trials:
81%), which the result's `note` names. Trials are taken as independent: a run that shows
one stimulus several times would need a bootstrap over stimuli, which this does not do.

The paper's test of kappa against chance: two independent observers agree on each trial
with probability c_exp, so the number of trials they agree on is binomial (n, c_exp); the
p-value here is the exact two-sided one with equal tails, the test whose inversion is the
Clopper-Pearson interval the reference code draws around c_exp
(`binom.confint(..., methods = "exact")` in data-analysis/simulate-confidence-intervals.R).
It takes the accuracies as known, not estimated.
"""

# Imports inside functions: scipy loads on first use (the binomial test only).

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from visioneval.stats.bootstrap import LEVEL, RESAMPLES, SEED

CELLS = ("both right", "only a right", "only b right", "both wrong")
"""The four kinds of trial, in the order of every array of counts here."""

ADDED = 0.5
"""Trials of each kind added where the interval's resamples are drawn (`smoothed_interval`):
half a trial, as the Haldane-Anscombe correction adds to a 2 x 2 table's empty cells."""
FEW_ERRORS = 5
"""Below this many errors (or right answers) of either observer the interval carries a note:
its coverage was measured from about that many on (docs/error-consistency.md)."""


@dataclass(frozen=True)
class ErrorConsistency:
    """Error consistency of observers a and b on the trials both answered. A figure that
    cannot be computed is None and `reason` says why; never 0 in its place."""

    n: int
    both_right: int
    only_a_right: int
    only_b_right: int
    both_wrong: int
    accuracy_a: float | None
    accuracy_b: float | None
    c_obs: float | None
    c_exp: float | None
    kappa: float | None
    interval: tuple[float, float] | None  # 95%, `smoothed_interval`
    p_value: float | None  # the paper's binomial test of c_obs against c_exp
    reason: str | None = None  # why kappa (and its interval and test) is absent
    note: str | None = None  # why the interval may hold less than 95% (few errors)


def kappa_of(cells: np.ndarray) -> np.ndarray:
    """Kappa of each table of counts (..., 4) in the order of CELLS; NaN where c_exp = 1 or
    there are no trials."""
    a, b, c, d = (np.asarray(cells, dtype=np.float64)[..., k] for k in range(4))
    denominator = (a + b) * (b + d) + (a + c) * (c + d)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, 2 * (a * d - b * c) / denominator, np.nan)


def kappa_se(cells: np.ndarray) -> np.ndarray:
    """The large-sample standard error of kappa for each table (..., 4) (Fleiss, Cohen &
    Everitt 1969, their variance for kappa away from 0, on a 2 x 2 table whose rows are a's
    right and wrong and whose columns are b's); NaN where kappa is."""
    cells = np.asarray(cells, dtype=np.float64)
    n = cells.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        p11, p10, p01, p00 = (cells[..., k] / n for k in range(4))
        pa, pb = p11 + p10, p11 + p01  # a right, b right
        expected = pa * pb + (1 - pa) * (1 - pb)
        kappa = kappa_of(cells)
        off = 1 - kappa
        diagonal = (p11 * (1 - (pa + pb) * off) ** 2
                    + p00 * (1 - ((1 - pa) + (1 - pb)) * off) ** 2)
        across = off ** 2 * (p10 * (pb + (1 - pa)) ** 2 + p01 * ((1 - pb) + pa) ** 2)
        variance = (diagonal + across - (kappa - expected * off) ** 2) / (
            n * (1 - expected) ** 2)
        return np.sqrt(np.maximum(variance, 0.0))


def resample_cells(cells: np.ndarray, resamples: int, rng: np.random.Generator,
                   added: float = 0.0) -> np.ndarray:
    """Bootstrap resamples of each table's trials, counted by kind: (resamples, ..., 4),
    each the table's number of trials drawn from the multinomial of its shares with `added`
    trials of each kind (0: the plain bootstrap over trials)."""
    cells = np.asarray(cells, dtype=np.int64)
    smoothed = cells + added
    shares = smoothed / np.maximum(smoothed.sum(axis=-1), 1e-300)[..., None]
    return rng.multinomial(cells.sum(axis=-1), shares,
                           size=(resamples, *cells.shape[:-1]))


def smoothed_interval(cells: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED,
                      rng: np.random.Generator | None = None) -> np.ndarray:
    """The 95% interval of kappa for each table of counts (..., 4): (..., 2). The percentile
    interval of the bootstrap over trials, with ADDED trials of each kind in the table the
    trials are drawn from and in each resample, so that a kind no trial fell in (no error
    in common, most often) can still be drawn and every resample has a kappa. NaN where the
    table has no trials."""
    cells = np.asarray(cells, dtype=np.int64)
    rng = np.random.default_rng(seed) if rng is None else rng
    found = kappa_of(resample_cells(cells, resamples, rng, ADDED) + ADDED)
    tail = (1 - LEVEL) / 2
    low, high = np.quantile(found, [tail, 1 - tail], axis=0)
    some = cells.sum(axis=-1) > 0
    return np.stack([np.where(some, low, np.nan), np.where(some, high, np.nan)], axis=-1)


def binomial_p(agreeing: np.ndarray | int, n: np.ndarray | int,
               expected: np.ndarray | float) -> np.ndarray:
    """The paper's test: the exact two-sided (equal tails) p-value of `agreeing` trials of
    `n` under Binomial(n, c_exp); 1 where c_exp is 0 or 1 (nothing can differ from it)."""
    from scipy.stats import binom

    k, n_, p = np.asarray(agreeing), np.asarray(n), np.asarray(expected, dtype=np.float64)
    lower = binom.cdf(k, n_, p)
    upper = binom.sf(k - 1, n_, p)
    found = np.minimum(1.0, 2 * np.minimum(lower, upper))
    return np.where((p <= 0) | (p >= 1), 1.0, found)


def error_consistency(a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray,
                      resamples: int = RESAMPLES,
                      seed: int = SEED) -> ErrorConsistency:
    """Error consistency of two observers' correctness on the same trials, trial i of `a`
    beside trial i of `b` (True: right). The interval comes from `resamples` bootstrap
    resamples drawn with `seed`, so the same answers give the same interval."""
    if len(a) != len(b):
        raise ValueError(f"the two observers answered {len(a)} and {len(b)} trials: pair "
                         "them first (the same trials, in the same order)")
    right_a = np.asarray(a, dtype=bool)
    right_b = np.asarray(b, dtype=bool)
    return from_counts(int(np.sum(right_a & right_b)), int(np.sum(right_a & ~right_b)),
                       int(np.sum(~right_a & right_b)), int(np.sum(~right_a & ~right_b)),
                       resamples=resamples, seed=seed)


def from_counts(both_right: int, only_a_right: int, only_b_right: int, both_wrong: int,
                resamples: int = RESAMPLES, seed: int = SEED) -> ErrorConsistency:
    """`error_consistency` of the 2 x 2 table of counts."""
    counts = (both_right, only_a_right, only_b_right, both_wrong)
    if min(counts) < 0:
        raise ValueError(f"counts of trials cannot be negative: {counts}")
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    n = sum(counts)
    if n == 0:
        return ErrorConsistency(0, *counts, None, None, None, None, None, None, None,
                                "no trial answered by both observers")
    accuracy_a = (both_right + only_a_right) / n
    accuracy_b = (both_right + only_b_right) / n
    c_obs = (both_right + both_wrong) / n
    c_exp = accuracy_a * accuracy_b + (1 - accuracy_a) * (1 - accuracy_b)
    cells = np.array(counts, dtype=np.int64)
    kappa = float(kappa_of(cells))
    if np.isnan(kappa):
        which = "right" if both_right == n else "wrong"
        return ErrorConsistency(n, *counts, accuracy_a, accuracy_b, c_obs, 1.0, None, None,
                                None, f"both observers were {which} on all {n} trials: c_exp "
                                "= 1, so kappa is 0/0 (no errors to be consistent or not)")
    for name, right in (("a", both_right + only_a_right), ("b", both_right + only_b_right)):
        if right in (0, n):
            what = "right" if right == n else "wrong"
            return ErrorConsistency(n, *counts, accuracy_a, accuracy_b, c_obs, c_exp, None,
                                    None, None, f"observer {name} was {what} on all {n} "
                                    "trials: kappa is 0 whatever the other observer does, so "
                                    "it says nothing about shared errors")
    low, high = smoothed_interval(cells, resamples, seed)
    p_value = float(binomial_p(both_right + both_wrong, n, c_exp))
    return ErrorConsistency(n, *counts, accuracy_a, accuracy_b, c_obs, c_exp, kappa,
                            (float(low), float(high)), p_value,
                            note=few_errors_note(counts))


def few_errors_note(counts: tuple[int, int, int, int]) -> str | None:
    """"observer a made 2 errors: ..." when either observer made fewer than FEW_ERRORS
    errors, or fewer right answers; None otherwise."""
    both_right, only_a, only_b, both_wrong = counts
    n = sum(counts)
    for name, right in (("a", both_right + only_a), ("b", both_right + only_b)):
        rarer = min(right, n - right)
        if rarer < FEW_ERRORS:
            what = "errors" if right >= n - right else "right answers"
            return (f"observer {name} has {rarer} {what} in {n} trials: the interval's 95% "
                    f"is measured from {FEW_ERRORS} on")
    return None
