"""Krippendorff's alpha with a bootstrap interval over units: how far rubric judges agree with
each other, a judge with itself over repeated samples, and a judge with human scores.

Alpha is 1 - D_o / D_e (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"):
the disagreement observed within units over the disagreement expected between any two
pairable values. For the interval metric (v - v')^2 both are sums of squares, so only each
unit's count m_u and spread enter:

    alpha = 1 - (n - 1) * sum_u m_u * SS_u / (m_u - 1)  /  (n * SS)

with n the pairable values, SS_u the squared deviations within unit u and SS those of all
n values. The ordinal metric is the interval metric on each value's mid-rank among the
pairable values (how many lie below it plus half its own count), so it is the same
formula on ranks; the ranks depend on which units a resample holds and are computed per
resample. This gives the `krippendorff` package's values (tests check it) without its
units x values x values coincidence arrays, which for fractional scores (means over human
raters, weighted rubric scores) take 5.7 s and 5.5 GB a call on 10 raters x 200 units
(measure/agreement_speed.py). A bootstrap resample is a vector of per-unit counts, as in
`stats.bootstrap`, so 1000 resamples are a few array operations per chunk.

The interval resamples units. Under 60 units it is the studentized (bootstrap-t) interval
(Efron & Tibshirani 1993, ch. 12), with the jackknife over units for the standard error of
alpha and of each resample's alpha; from 60 units the percentile interval. The percentile
interval alone held a simulated true alpha in about 87% of samples of 5 raters x 15 cases
and 91% of 2 x 20; the studentized one near 95% (measure/alpha_coverage.py,
docs/judge-checks.md). Its cost is the units' count times the percentile's, so it stops
where the percentile interval covers well.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import spearmanr

from visioneval.stats.bootstrap import CHUNK, LEVEL

Level = Literal["interval", "ordinal"]
BATCH_CELLS = 2_000_000  # resamples x pairable values held at once (16 MB a float array)
MIN_PAIRS = 3  # judge against human: fewer pairs give no rank correlation worth a p-value
STUDENTIZED_BELOW = 60  # units: fewer get the bootstrap-t interval, more the percentile one


@dataclass(frozen=True)
class Agreement:
    alpha: float | None  # Krippendorff's alpha; None when it cannot be computed
    ci95: tuple[float, float] | None
    units: int  # units with at least two ratings
    raters: int
    level: Level
    unavailable: str | None = None  # why alpha (or its interval) is absent


@dataclass(frozen=True)
class HumanAgreement:
    n: int
    alpha: float | None
    alpha_ci95: tuple[float, float] | None
    spearman: float | None
    spearman_p: float | None
    mean_abs_diff: float | None  # judge minus human, same scale
    mean_diff: float | None
    unavailable: str | None = None


class Pairable:
    """The pairable ratings (units with two or more) of a raters x units matrix, laid out
    for alpha on any per-unit count vector: the point estimate is all counts 1."""

    def __init__(self, ratings: np.ndarray, level: Level):
        data = np.asarray(ratings, dtype=np.float64)
        if data.ndim != 2:
            raise ValueError(f"ratings must be raters x units, got shape {data.shape}")
        if np.isinf(data).any():
            raise ValueError("ratings must be finite numbers or NaN for missing")
        self.level = level
        present = ~np.isnan(data)
        pairable = present.sum(axis=0) >= 2
        columns = data[:, pairable].T  # units x raters, missing as NaN
        self.units = len(columns)
        unit_of, rater_of = np.nonzero(~np.isnan(columns))  # values in unit order
        values = columns[unit_of, rater_of]
        self.domain, self.value_of = np.unique(values, return_inverse=True)
        self.unit_of = unit_of
        self.m = np.bincount(unit_of, minlength=self.units).astype(np.float64)
        self.unit_starts = np.concatenate(([0], np.cumsum(self.m)[:-1])).astype(np.intp)
        # Values in the order of their domain index, for per-value counts by segments.
        self.by_value = np.argsort(self.value_of, kind="stable")
        counts = np.bincount(self.value_of, minlength=len(self.domain))
        self.value_starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.intp)
        # Interval positions: the values themselves, centred (alpha is shift-free; the
        # sums of squares lose less to rounding near zero).
        self.centred = self.domain - values.mean() if len(values) else self.domain

    def varied(self) -> bool:
        return len(self.domain) >= 2

    def alphas(self, weights: np.ndarray) -> np.ndarray:
        """Alpha for each row of per-unit counts (k x units); NaN where the resample's
        pairable values do not vary (alpha is 0/0)."""
        per_value = weights[:, self.unit_of]  # k x values: each value's weight
        n_v = np.add.reduceat(per_value[:, self.by_value], self.value_starts, axis=1)
        n = n_v.sum(axis=1)
        if self.level == "ordinal":
            positions = np.cumsum(n_v, axis=1) - n_v / 2  # mid-ranks
        else:
            positions = np.broadcast_to(self.centred, n_v.shape)
        centre = (n_v * positions).sum(axis=1) / n
        positions = positions - centre[:, None]
        total = n * (n_v * positions ** 2).sum(axis=1)  # n * SS (the mean is now 0)
        at = positions[:, self.value_of]  # k x values: each value's position
        means = np.add.reduceat(at, self.unit_starts, axis=1) / self.m
        spread = np.add.reduceat((at - means[:, self.unit_of]) ** 2, self.unit_starts, axis=1)
        within = self.m * spread / (self.m - 1)  # m_u * SS_u / (m_u - 1)
        observed = (weights * within).sum(axis=1)
        flat = (n_v > 0).sum(axis=1) < 2  # one value throughout: 0/0
        with np.errstate(divide="ignore", invalid="ignore"):
            out = 1 - (n - 1) * observed / total
        out[flat] = np.nan
        return out

    def chunk(self) -> int:
        """Resamples per batch: CHUNK, fewer when the per-value arrays would be large."""
        return max(1, min(CHUNK, BATCH_CELLS // max(len(self.value_of), 1)))


def _why_not(units: Pairable) -> str | None:
    if units.units < 2:
        return (f"{units.units} case{'s' if units.units != 1 else ''} rated at least twice: "
                "alpha needs 2")
    if not units.varied():
        return f"every rating is {units.domain[0]:g}: alpha is undefined without variation"
    return None


def krippendorff_alpha(ratings: np.ndarray, level: Level = "interval") -> float | None:
    """Krippendorff's alpha of a raters x units matrix (NaN = missing); None when fewer than
    2 units have two ratings or no rating differs from another."""
    units = Pairable(ratings, level)
    if _why_not(units) is not None:
        return None
    value = float(units.alphas(np.ones((1, units.units)))[0])
    return None if math.isnan(value) else value


def resample_counts(rng: np.random.Generator, n: int, size: int) -> np.ndarray:
    """`size` bootstrap resamples of n units as per-unit counts (size x n)."""
    picks = rng.integers(0, n, size=(size, n)) + (np.arange(size) * n)[:, None]
    return np.bincount(picks.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


def jackknife_se(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Jackknife standard error per row of leave-one-draw-out alphas (k x units), a unit's
    value counted as often as it was drawn; NaN values (no variation left) are skipped."""
    n = counts.sum(axis=1)
    usable = counts * ~np.isnan(values)
    filled = np.where(np.isnan(values), 0.0, values)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (usable * filled).sum(axis=1) / usable.sum(axis=1)
        spread = (usable * (filled - mean[:, None]) ** 2).sum(axis=1)
        return np.sqrt((n - 1) / n * spread)


def leave_one_out(units: Pairable, counts: np.ndarray) -> np.ndarray:
    """Alpha of each resample (rows of counts) with one draw of each unit left out (k x
    units); NaN where the unit was not drawn. On the interval level from per-unit sums (a
    unit's values do not move when another leaves); the ordinal ranks do, so each is
    computed whole."""
    if units.level == "interval":
        return _interval_leave_one_out(units, counts)
    k, n = counts.shape
    rows = (counts[:, None, :] - np.eye(n)[None, :, :]).reshape(k * n, n)
    drawn = rows.min(axis=1) >= 0
    out = np.full(k * n, np.nan)
    out[drawn] = units.alphas(rows[drawn])
    return out.reshape(k, n)


def _interval_leave_one_out(units: Pairable, counts: np.ndarray) -> np.ndarray:
    at = units.centred[units.value_of]
    s1 = np.add.reduceat(at, units.unit_starts)
    s2 = np.add.reduceat(at ** 2, units.unit_starts)
    within = units.m * (s2 - s1 ** 2 / units.m) / (units.m - 1)
    sums = [counts @ x for x in (units.m, s1, s2, within)]
    n, first, second, observed = (total[:, None] - x[None, :]
                                  for total, x in zip(sums, (units.m, s1, s2, within),
                                                      strict=True))
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = second - first ** 2 / n  # SS of the values left
        out = 1 - (n - 1) * observed / (n * spread)
    out[(counts < 1) | ~(spread > 1e-10 * second)] = np.nan
    return out


def studentized(units: Pairable, alpha: float, counts: np.ndarray, found: np.ndarray
                ) -> tuple[float, float] | None:
    """The bootstrap-t interval, or None when a jackknife standard error is 0 or undefined
    (every case-left-out alpha the same, as with raters that always agree)."""
    ones = np.ones((1, units.units))
    se = float(jackknife_se(leave_one_out(units, ones), ones)[0])
    if not se > 0:
        return None
    step = max(1, BATCH_CELLS // max(units.units * len(units.value_of), 1))
    se_star = np.concatenate([jackknife_se(leave_one_out(units, counts[i:i + step]),
                                           counts[i:i + step])
                              for i in range(0, len(counts), step)])
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (found - alpha) / se_star
    t = t[np.isfinite(t)]
    if 2 * len(t) < len(found):
        return None
    tail = (1 - LEVEL) / 2
    t_low, t_high = np.quantile(t, [tail, 1 - tail])
    return float(alpha - t_high * se), float(min(alpha - t_low * se, 1.0))  # alpha <= 1


def agreement(ratings: np.ndarray, level: Level = "interval", resamples: int = 1000,
              seed: int = 0) -> Agreement:
    """Alpha and its 95% interval from `resamples` bootstrap resamples of the units
    (columns): studentized under STUDENTIZED_BELOW units (percentile where it cannot be),
    percentile from there. Resamples whose values do not vary have no alpha and are
    dropped; when more than half are, there is no interval."""
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    units = Pairable(ratings, level)
    raters = int(np.asarray(ratings).shape[0])
    why = _why_not(units)
    if why is not None:
        return Agreement(None, None, units.units, raters, level, why)
    alpha = float(units.alphas(np.ones((1, units.units)))[0])
    rng = np.random.default_rng(seed)
    step = units.chunk()
    counts = np.concatenate([resample_counts(rng, units.units, min(step, resamples - start))
                             for start in range(0, resamples, step)])
    found = np.concatenate([units.alphas(counts[start:start + step])
                            for start in range(0, resamples, step)])
    varied = ~np.isnan(found)
    kept = found[varied]
    dropped = resamples - len(kept)
    if 2 * dropped > resamples:
        return Agreement(alpha, None, units.units, raters, level,
                         f"{dropped} of {resamples} bootstrap resamples had no variation: "
                         "no interval")
    interval = (studentized(units, alpha, counts[varied], kept)
                if units.units < STUDENTIZED_BELOW else None)
    if interval is None:
        tail = 100 * (1 - LEVEL) / 2
        low, high = np.percentile(kept, [tail, 100 - tail])
        interval = (float(low), float(high))
    return Agreement(alpha, interval, units.units, raters, level)


def against_reference(judge: Sequence[float], human: Sequence[float], resamples: int = 1000,
                      seed: int = 0) -> HumanAgreement:
    """A judge's scores against human scores of the same cases (same scale, NaN = not
    scored; such pairs are left out): alpha with the two as two raters (interval), Spearman's
    rank correlation, and the mean (absolute) difference judge minus human."""
    a = np.asarray(judge, dtype=np.float64)
    b = np.asarray(human, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"judge and human scores must be two lists of one length, got "
                         f"{a.shape} and {b.shape}")
    both = ~(np.isnan(a) | np.isnan(b))
    a, b = a[both], b[both]
    n = len(a)
    if n < MIN_PAIRS:
        return HumanAgreement(n, None, None, None, None, None, None,
                              f"{n} case{'s' if n != 1 else ''} scored by both the judge and "
                              f"a human: agreement needs {MIN_PAIRS}")
    found = agreement(np.stack([a, b]), "interval", resamples, seed)
    reasons = [found.unavailable] if found.unavailable else []
    constant = [f"the {who} scores are all {col[0]:g}" for who, col in (("judge's", a),
                ("human", b)) if np.ptp(col) == 0]
    rho: float | None = None
    p: float | None = None
    if constant:
        reasons.append(f"{' and '.join(constant)}: no rank correlation")
    else:
        result = spearmanr(a, b)
        rho, p = float(result.statistic), float(result.pvalue)
    diff = a - b
    return HumanAgreement(n, found.alpha, found.ci95, rho, p, float(np.abs(diff).mean()),
                          float(diff.mean()), "; ".join(reasons) or None)
