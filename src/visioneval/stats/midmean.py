"""Cleveland & McGill's error of a numeric judgment and the average they take of it.

The error of one judgment is log2(|judged − true| + 1/8) (Cleveland & McGill 1984, J Am
Stat Assoc 79:531-554, p. 540): the 1/8 keeps an exact answer finite (−3), and the
log makes a miss of 2 points where 1 would do count as much as one of 20 where 10 would.
Errors are averaged as a midmean, the mean of their middle 50% (Cleveland & McGill; Heer
& Bostock 2010), which a few wild answers cannot move.

The midmean here is the interquartile mean as a functional of the distribution: each of n
sorted values carries mass 1/n and the values whose mass lies between the 25% and the 75%
point count, the ones straddling either point in part. So the midmean of a sample is that of
its empirical distribution, the one of a known discrete distribution (an observer's answers)
follows from the same weights, and it moves continuously as values move. Its interval is
the bootstrap percentile interval over resampled trials (Efron & Tibshirani 1993, ch. 13):
a resample is a multinomial count per sorted value, so no resample is sorted again, and the
values are sorted first so the interval does not depend on the order trials were answered
in."""

# Imports inside functions: numpy loads when a midmean is taken, not when the CLI starts.

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EXACT = 1 / 8  # the constant Cleveland & McGill add before the log
LOW, HIGH = 0.25, 0.75  # the middle half
CELLS = 250_000  # resamples x values held at once: a chunk's arrays stay ~2 MB each


def log2_error(judged: float, true: float) -> float:
    """log2(|judged − true| + 1/8): −3 for an exact answer, 0 for a miss of 7/8."""
    return math.log2(abs(judged - true) + EXACT)


def midmean(values: Sequence[float] | np.ndarray) -> float | None:
    """The mean of the middle 50% of the values (the straddling ones in part); None when
    there are none."""
    import numpy as np

    found = np.sort(np.asarray(values, dtype=np.float64))
    if found.size == 0:
        return None
    return float(_midmeans(found, np.ones((1, found.size)))[0])


def weighted_midmean(values: Sequence[float] | np.ndarray,
                     weights: Sequence[float] | np.ndarray) -> float | None:
    """The midmean of a discrete distribution: `values` with probabilities `weights` (any
    positive scale). An observer's answers enumerated give its true midmean error."""
    import numpy as np

    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    keep = w > 0
    if not keep.any():
        return None
    order = np.argsort(v[keep], kind="stable")
    return float(_midmeans(v[keep][order], w[keep][order][None, :])[0])


def midmean_draws(values: Sequence[float] | np.ndarray, resamples: int,
                  seed: int | Sequence[int]) -> np.ndarray:
    """`resamples` bootstrap replicates of the midmean of `values` (trials drawn with
    replacement), computed in chunks so memory stays flat in the number of trials."""
    import numpy as np

    found = np.sort(np.asarray(values, dtype=np.float64))
    n = found.size
    if n == 0 or resamples <= 0:
        return np.empty(0)
    rng = np.random.default_rng(seed)
    chunk = max(1, min(resamples, CELLS // n))
    out = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        counts = rng.multinomial(n, np.full(n, 1 / n), size=size)
        out.append(_midmeans(found, counts.astype(np.float64)))
    return np.concatenate(out)


def percentile_interval(draws: np.ndarray, level: float = 0.95
                        ) -> tuple[float, float] | None:
    """The central `level` percentile interval of bootstrap draws; None without draws."""
    import numpy as np

    if len(draws) == 0:
        return None
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


def _midmeans(sorted_values: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Per row of `masses` (a weight per sorted value), the mean of the values whose
    cumulative share lies in [25%, 75%], the straddling ones in part."""
    import numpy as np

    share = masses / masses.sum(axis=1, keepdims=True)
    upper = np.cumsum(share, axis=1)
    lower = upper - share
    inside = np.clip(np.minimum(upper, HIGH) - np.maximum(lower, LOW), 0.0, None)
    return (inside * sorted_values).sum(axis=1) / (HIGH - LOW)
