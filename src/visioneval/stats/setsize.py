"""Accuracy against set size, and feature against conjunction search (Treisman & Gelade
1980: a feature target pops out, flat in set size; a conjunction target is found serially,
so accuracy falls as the display grows).

The effect of set size is given per doubling (log2 set size) two ways: the slope of a
binomial GLM with a logit link (maximum likelihood by iteratively reweighted least squares,
Wald 95% interval), and, easier to read, the least-squares slope of proportion correct in
points per doubling (trials as weights) with a parametric-bootstrap 95% interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from visioneval.stats.binomial import wilson
from visioneval.stats.detection import Z95

SEED = 20261122
RESAMPLES = 1000


@dataclass(frozen=True)
class SetSizeEffect:
    logit_slope: float  # change in log-odds correct per doubling of the set size
    logit_slope_ci: tuple[float, float]  # Wald
    points_per_doubling: float  # change in proportion correct per doubling
    points_ci: tuple[float, float]  # parametric bootstrap


@dataclass(frozen=True)
class ConditionDifference:
    """Feature minus conjunction accuracy at one set size (different displays: unpaired)."""

    set_size: int
    feature: float
    conjunction: float
    difference: float
    interval: tuple[float, float]  # Newcombe's hybrid score interval (Newcombe 1998)
    p_value: float  # Fisher's exact test


def _arrays(set_sizes: Sequence[int], n_correct: Sequence[int], n_trials: Sequence[int]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.log2(np.asarray(set_sizes, dtype=np.float64))
    k = np.asarray(n_correct, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    if not len(x) == len(k) == len(n) or len(np.unique(x)) < 2:
        raise ValueError("set_sizes, n_correct and n_trials need one value per set size, "
                         "with at least 2 different set sizes")
    if (n <= 0).any() or (k < 0).any() or (k > n).any():
        raise ValueError("each set size needs n_trials > 0 and 0 <= n_correct <= n_trials")
    return x, k, n


def _logit_glm(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """The slope of logit(p) = b0 + b1·x by IRLS and its standard error. Counts of 0 or all
    get half a trial either way so the fit stays finite."""
    k = np.clip(k, 0.5, n - 0.5) if ((k == 0) | (k == n)).all() else k
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    info = np.eye(2)
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ beta)))
        weights = n * p * (1 - p)
        info = design.T @ (design * weights[:, None])
        step = np.linalg.solve(info, design.T @ (k - n * p))
        beta = beta + step
        if np.abs(step).max() < 1e-10:
            break
    return float(beta[1]), float(math.sqrt(np.linalg.inv(info)[1, 1]))


def _points_slopes(x: np.ndarray, k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Weighted least-squares slopes of k/n on x, one per row of k."""
    mean_x = (n * x).sum() / n.sum()
    p = k / n
    mean_p = (p * n).sum(axis=-1, keepdims=True) / n.sum()
    return ((n * (x - mean_x)) * (p - mean_p)).sum(axis=-1) / (n * (x - mean_x) ** 2).sum()


def set_size_effect(set_sizes: Sequence[int], n_correct: Sequence[int],
                    n_trials: Sequence[int], resamples: int = RESAMPLES,
                    seed: int = SEED) -> SetSizeEffect:
    """How accuracy changes per doubling of the set size, with 95% intervals."""
    x, k, n = _arrays(set_sizes, n_correct, n_trials)
    slope, se = _logit_glm(x, k, n)
    points = float(_points_slopes(x, k, n))
    rng = np.random.default_rng(seed)
    draws = rng.binomial(n.astype(np.int64), k / n, size=(resamples, len(x)))
    low, high = np.percentile(_points_slopes(x, draws.astype(np.float64), n), [2.5, 97.5])
    return SetSizeEffect(slope, (slope - Z95 * se, slope + Z95 * se), points,
                         (float(low), float(high)))



def conjunction_vs_feature(set_sizes: Sequence[int], feature_correct: Sequence[int],
                           feature_trials: Sequence[int], conjunction_correct: Sequence[int],
                           conjunction_trials: Sequence[int]) -> list[ConditionDifference]:
    """Feature minus conjunction accuracy at each matched set size. The two conditions are
    different displays, so the test is unpaired (Fisher's exact); when the same items were
    answered in both, pair them with `visioneval.stats.paired.mcnemar` instead."""
    from scipy.stats import fisher_exact  # keeps `visioneval list` (which loads this) light

    rows = zip(set_sizes, feature_correct, feature_trials, conjunction_correct,
               conjunction_trials, strict=True)
    out = []
    for size, kf, nf, kc, nc in rows:
        if nf <= 0 or nc <= 0 or not 0 <= kf <= nf or not 0 <= kc <= nc:
            raise ValueError(f"set size {size}: counts must satisfy 0 <= correct <= trials "
                             "with trials > 0")
        pf, pc = kf / nf, kc / nc
        (lf, uf), (lc, uc) = wilson(kf, nf), wilson(kc, nc)
        d = pf - pc
        interval = (d - math.sqrt((pf - lf) ** 2 + (uc - pc) ** 2),
                    d + math.sqrt((uf - pf) ** 2 + (pc - lc) ** 2))
        p = float(fisher_exact([[kf, nf - kf], [kc, nc - kc]]).pvalue)
        out.append(ConditionDifference(int(size), pf, pc, d, interval, p))
    return out
