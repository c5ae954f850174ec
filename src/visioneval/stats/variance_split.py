"""How much of a score's uncertainty is the items and how much the model's answers.

A model asked an item K times need not answer it the same way each time. The score of a run
(the mean over items of each item's mean answer) then varies for two reasons: which items
the benchmark holds (between items: the variance of the items' true scores) and how each
item happened to be answered (within items: the variance of one answer about its item's
true score, on average over items). Miller 2024, "Adding error bars to evals" (section 3),
writes the variance of the score over n items with K answers each as

    Var(score) = (sigma2_between + sigma2_within / K) / n,

which says what more answers per item can and cannot buy: they shrink only the second term.

Estimates (one-way random effects by moments, Searle, Casella & McCulloch 1992, ch. 3):
sigma2_within is the mean over items of each item's sample variance of its answers (items
with two answers or more); sigma2_between is the variance of the item means less the mean
of (item variance / K_i). The intervals draw whole items (or whole images, when items share
one) with replacement, 1000 times, and take the 2.5 and 97.5 percentiles; sigma2_between
may come out below 0 in a resample or in the estimate when items hardly differ, and is shown
as estimated (a negative value says the items' differences are lost in the answers' noise).
"""

# Imports inside functions: numpy loads when a split is computed, not when a command that
# only reads (or `--help`) imports the package.

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from visioneval.stats.bootstrap import LEVEL, Clusters, replicates

if TYPE_CHECKING:
    import numpy as np

TARGET_SHARE = 0.10
"""The share of the score's variance left to answer variation that the "what K would" line
aims at: below a tenth, more answers per item hardly narrow the interval."""


@dataclass(frozen=True)
class Part:
    """One estimate with its 95% interval (None when it cannot be drawn)."""

    value: float
    ci95: tuple[float, float] | None


@dataclass(frozen=True)
class Split:
    """The score's variance split over `items` items with two answers or more
    (`answers_per_item`: their mean K). `within_share`: the part of Var(score) that is
    answer variation, (sigma2_within / K) / (sigma2_between + sigma2_within / K)."""

    items: int
    answers_per_item: float
    between: Part
    within: Part
    within_share: Part
    clusters: str | None
    n_clusters: int

    def variance_of_score(self, n_items: int, answers_per_item: float) -> float | None:
        """Miller's Var(score) for `n_items` items of `answers_per_item` answers each,
        with these components (None when sigma2_between + sigma2_within/K is not positive)."""
        found = max(self.between.value, 0.0) + self.within.value / answers_per_item
        return found / n_items if found > 0 else None

    def answers_for_share(self, share: float = TARGET_SHARE) -> int | None:
        """The fewest answers per item that leave answer variation at most `share` of the
        score's variance; None when the items do not differ (no K does)."""
        between = self.between.value
        if self.within.value <= 0:
            return 1
        if between <= 0:
            return None
        return max(1, math.ceil(self.within.value * (1 - share) / (share * between)))


def _item_rows(sums: np.ndarray, squares: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Per item: its mean, the mean squared, its answers' sample variance and that over K."""
    import numpy as np

    means = sums / counts
    variances = (squares - sums * means) / (counts - 1)
    variances = np.maximum(variances, 0.0)  # rounding below 0 for an item answered alike
    return np.column_stack([means, means * means, variances, variances / counts,
                            counts.astype(np.float64)])


def _statistic(sums: np.ndarray, n: int) -> np.ndarray:
    """(between, within, within share) of resampled item rows' column sums."""
    import numpy as np

    mean = sums[:, 0] / n
    variance_of_means = (sums[:, 1] - n * mean * mean) / max(n - 1, 1)
    within = sums[:, 2] / n
    noise = sums[:, 3] / n  # the mean of s2_i / K_i
    between = variance_of_means - noise
    answers = sums[:, 4] / n
    own = within / answers
    total = np.maximum(between, 0.0) + own
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(total > 0, own / total, np.nan)
    return np.column_stack([between, within, share])


def split(sums: np.ndarray, squares: np.ndarray, counts: np.ndarray,
          clusters: Clusters | None = None, resamples: int = 1000) -> Split | None:
    """The split of items' answers: per item the sum of its scores, the sum of their
    squares and how many (each at least 2); `clusters`: which items resample together (their
    image), else each item alone. None with fewer than 2 items."""
    import numpy as np

    if len(counts) < 2:
        return None
    rows = _item_rows(np.asarray(sums, float), np.asarray(squares, float),
                      np.asarray(counts, float))
    point = _statistic(rows.sum(axis=0, keepdims=True), len(rows))[0]
    enough = clusters is None or clusters.count >= 2
    drawn = replicates(rows, _statistic, resamples, clusters=clusters) if enough else None

    def part(i: int) -> Part:
        if drawn is None:
            return Part(float(point[i]), None)
        column = drawn[:, i]
        column = column[np.isfinite(column)]
        if len(column) < resamples // 2:
            return Part(float(point[i]), None)
        tail = 100 * (1 - LEVEL) / 2
        low, high = np.percentile(column, [tail, 100 - tail])
        return Part(float(point[i]), (float(low), float(high)))

    return Split(items=len(rows), answers_per_item=float(rows[:, 4].mean()),
                 between=part(0), within=part(1), within_share=part(2),
                 clusters=None if clusters is None or clusters.singletons else clusters.by,
                 n_clusters=len(rows) if clusters is None else clusters.count)
