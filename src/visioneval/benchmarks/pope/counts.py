"""The confusion counts of one protocol on one slice of POPE, and the metrics made of them,
with 95% intervals that resample an image's questions together.

Positive is "yes", as in the paper ([P] evaluate.py lines 36-49). From the counts:
accuracy = right answers / n; precision = TP / (TP + FP); recall = TP / (TP + FN);
F1 = 2 P R / (P + R); yes ratio = answers read "yes" / n. What a protocol counts:
- paper: every answer is read "yes" or "no"; right = reading equals the label.
- lmms-eval: right = the answer is exactly the label; TP, FP, FN and TN count only the
  answers that are exactly "yes" or "no" ([L] utils.py lines 39-65), the others are
  `unparsed`; its `pope_yes_ratio` is the share of "yes" *labels* ([L] lines 74-84).
- vlmevalkit: right = its reading ("Yes", "No", "Unknown") equals the label; in the counts
  "Unknown" is "no" ([V] yorn.py line 164); `unparsed` counts the Unknown readings.

A metric whose denominator is 0 is absent with the reason (the paper's code divides by zero
there; lmms-eval and VLMEvalKit print 0). Each answer keeps one short row (right, TP, FP,
FN, said yes) and its image; the interval is a cluster bootstrap over images (1000 seeded
resamples, `stats.bootstrap`), so the six questions of an image, or its 18 over the three
settings, are drawn together."""

# Imports inside functions: numpy loads when an interval is computed, as in stats/bootstrap.

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from visioneval.benchmarks.pope.spec import LMMS, NO, YES
from visioneval.stats.bootstrap import LEVEL, Outcomes, replicates

if TYPE_CHECKING:
    import numpy as np

METRICS = ("accuracy", "precision", "recall", "f1", "yes_ratio")
WHY = {
    "precision": "no answer read \"yes\" (TP + FP = 0): precision is undefined",
    "recall": "no \"yes\" label among the counted answers (TP + FN = 0): recall is undefined",
    "f1": "precision or recall is undefined or both are 0: F1 = 2PR/(P+R) is undefined",
}


class Counts:
    """One protocol on one slice: n, errors, the confusion counts and each answer's row."""

    def __init__(self) -> None:
        self.n = 0
        self.n_errors = 0
        self.right = 0
        self.tp = self.fp = self.tn = self.fn = 0
        self.said_yes = 0
        self.unparsed = 0
        self.labels_yes = 0
        self.rows = Outcomes(5)

    def error(self) -> None:
        self.n_errors += 1

    def add(self, sample_id: str, image: str | None, right: bool, said: str | None,
            label: str, unparsed: bool = False) -> None:
        """One scored answer: right or not, the yes/no the counts take (None: none)."""
        self.n += 1
        self.right += right
        self.labels_yes += label == YES
        self.unparsed += unparsed
        tp = fp = fn = 0
        if said == YES:
            self.said_yes += 1
            tp, fp = label == YES, label == NO
        elif said == NO:
            fn = label == YES
            self.tn += label == NO
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn
        self.rows.add(sample_id, (float(right), float(tp), float(fp), float(fn),
                                  float(said == YES)), image)

    def extend(self, other: Counts) -> None:
        for name in ("n", "n_errors", "right", "tp", "fp", "tn", "fn", "said_yes", "unparsed",
                     "labels_yes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.rows.extend(other.rows)

    def block(self, protocol: str, intervals: bool = True) -> dict[str, Any]:
        """metrics.json's block: counts, each metric or why it is absent, intervals."""
        block: dict[str, Any] = {"n": self.n, "n_errors": self.n_errors, "tp": self.tp,
                                 "fp": self.fp, "tn": self.tn, "fn": self.fn,
                                 "unparsed": self.unparsed}
        if not self.n:
            block["unavailable"] = f"no scored answer ({self.n_errors} failed requests)"
            return block
        values = metric_values(self.n, self.right, self.tp, self.fp, self.fn, self.said_yes)
        for name, value in zip(METRICS, values, strict=True):
            if value is None:
                block[f"{name}_unavailable"] = WHY[name]
            else:
                block[name] = value
        if protocol == LMMS:
            # lmms-eval's pope_yes_ratio is the share of "yes" labels, whatever the answers.
            block["lmms_yes_ratio"] = self.labels_yes / self.n
        if intervals:
            attach_intervals(block, self.rows)
        return block


def metric_values(n: int, right: float, tp: float, fp: float, fn: float, said_yes: float
                  ) -> list[float | None]:
    """Accuracy, precision, recall, F1 and yes ratio (None where undefined)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = None
    if precision is not None and recall is not None and precision + recall:
        f1 = 2 * precision * recall / (precision + recall)
    return [right / n, precision, recall, f1, said_yes / n]


def _statistic(sums: np.ndarray, n: int) -> np.ndarray:
    """The five metrics of each resample's column sums (NaN where undefined)."""
    import numpy as np

    right, tp, fp, fn, yes = (sums[:, i] for i in range(5))
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
        recall = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        f1 = np.where(precision + recall > 0,
                      2 * precision * recall / (precision + recall), np.nan)
    return np.stack([right / n, precision, recall, f1, yes / n], axis=1)


def attach_intervals(block: dict[str, Any], rows: Outcomes) -> None:
    """`<metric>_ci95` (and `_se`) for each metric the block has, over images."""
    intervals(block, rows, _statistic, METRICS)


def intervals(block: dict[str, Any], rows: Outcomes, statistic: Any,
              names: tuple[str, ...]) -> None:
    """A cluster bootstrap over images of `statistic`'s columns, written beside each named
    metric the block holds; an interval is absent with its reason when fewer than 2 images,
    or when the metric is undefined in some resamples."""
    import numpy as np

    present = [name for name in names if name in block]
    if not present:
        return
    clusters = rows.clusters("image")
    if clusters.count < 2:
        for name in present:
            block[f"{name}_ci95_unavailable"] = f"{clusters.count} image: no interval"
        return
    values = replicates(rows.matrix(), statistic, clusters=clusters)
    tail = 100 * (1 - LEVEL) / 2
    for i, name in enumerate(names):
        if name not in block:
            continue
        column = values[:, i]
        if np.isnan(column).any():
            block[f"{name}_ci95_unavailable"] = "undefined in some resamples of the images"
            continue
        low, high = np.percentile(column, [tail, 100 - tail])
        block[f"{name}_se"] = float(column.std(ddof=1))
        block[f"{name}_ci95"] = [float(low), float(high)]
        block[f"{name}_ci95_clusters"] = "image"
        block[f"{name}_ci95_n_clusters"] = clusters.count
