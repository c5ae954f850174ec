"""Two independent fits compared through their parametric-bootstrap draws: the i-th draw of
one paired with the i-th of the other (each fit resampled with its own random numbers, since
they are independent samples), the 2.5th and 97.5th percentiles of the paired differences
and ratios, and a two-sided p: twice the smaller share of differences at or below 0 and at
or above 0, with one added to each count (a Monte Carlo p is never 0; Davison & Hinkley
1997, section 4.2), so p < 0.05 when the interval leaves out 0.

A draw of math.inf ("beyond every level": a refit that never reached its criterion) gives
±inf differences, which sort past every number (an interval end then reads "unbounded"); a
pair where both draws are infinite has no difference: it is left out of the intervals and
counted as a tie on both sides in p."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PairedDraws:
    """`difference_ci95` and `ratio_ci95` (None: no defined pair; the ratio also when a
    draw is not positive) may have infinite ends."""

    difference_ci95: tuple[float, float] | None
    ratio_ci95: tuple[float, float] | None
    p_value: float
    pairs: int
    undefined: int  # pairs where both draws were infinite


def paired(first: Any, other: Any) -> PairedDraws | None:
    """The comparison of `other`'s draws with `first`'s (other − first, other / first); None
    when either has no draw."""
    pairs = min(len(first), len(other))
    if pairs == 0:
        return None
    x = np.asarray(first[:pairs], dtype=np.float64)
    y = np.asarray(other[:pairs], dtype=np.float64)
    undefined = np.isinf(x) & np.isinf(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        differences = np.where(undefined, np.nan, y - x)
        ratios = np.where(undefined, np.nan, y / x)
    ties = int((differences == 0).sum()) + int(undefined.sum())
    at_or_below = int((differences < 0).sum()) + ties
    at_or_above = int((differences > 0).sum()) + ties
    p = min(1.0, 2 * (min(at_or_below, at_or_above) + 1) / (pairs + 1))
    defined = ~undefined
    positive = bool((x[np.isfinite(x)] > 0).all() and (y[np.isfinite(y)] > 0).all())
    return PairedDraws(percentiles(differences[defined]),
                       percentiles(ratios[defined]) if positive else None, p, pairs,
                       int(undefined.sum()))


def percentiles(values: Any) -> tuple[float, float] | None:
    """2.5th and 97.5th percentiles without interpolating across an infinite value."""
    if not len(values):
        return None
    low, high = np.quantile(values, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)
